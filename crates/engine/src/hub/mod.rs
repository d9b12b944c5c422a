//! The session hub: the one door every surface uses. Commands go in, events come out.
//!
//! Invariants: one turn runs per session at a time (the runtime's turn slot); every turn is a
//! task the hub owns and joins on shutdown; an answer to a parked prompt of a session with no
//! running turn resumes that session, as does start-up for every session with unanswered calls.

mod authority;
mod commands;
mod drain;
mod expiry;
mod hot;
mod idle;
mod lease;
mod offboard;
mod persona_switch;
mod quorum;
mod recover;
mod relay;
mod replies;
mod rules;
mod stored_commands;
mod turns;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use workmate_protocol::{
    Actor, Event, EventKind, InboxItemId, Resolution, SessionId, Surface, TenantId,
};
use workmate_providers::ProviderRouter;
use workmate_store::{Clock, NewSession, ResolveOutcome, SessionRecord, Store};
use workmate_tools::ToolRegistry;

use crate::deps::Deps;
use crate::emitter::Emitter;
use crate::inbox_wait::InboxWaiters;
use crate::permissions::PermissionConfig;
use crate::runtime::SessionRuntime;
use crate::{EngineConfig, Error, Result};

pub use authority::check_mode;
pub use commands::Accepted;
pub use drain::Drained;
pub use replies::{Reply, Verdict, parse_reply, reply_token};
pub use stored_commands::{KEY_WINDOW, Submitted};

/// What the hub is built from.
#[derive(Debug)]
pub struct EngineParts {
    /// The database.
    pub store: Store,
    /// Model providers by name.
    pub providers: ProviderRouter,
    /// The tools sessions may call.
    pub tools: ToolRegistry,
    /// The permission policy of tenants that set none of their own (tenant settings key
    /// `permissions`).
    pub permissions: PermissionConfig,
    /// Settings.
    pub config: EngineConfig,
    /// The clock for timestamps.
    pub clock: Arc<dyn Clock>,
}

/// Drives every session of the process.
#[derive(Clone, Debug)]
pub struct SessionHub {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    deps: Arc<Deps>,
    sessions: Mutex<HashMap<(TenantId, SessionId), Arc<SessionRuntime>>>,
    tasks: TaskTracker,
    shutdown: CancellationToken,
    hot: hot::HotHistories,
    /// This process's name as a lease holder.
    replica: String,
    /// When the hub was made, by the store's clock: whatever this replica's name claimed before
    /// was claimed by an earlier process.
    started_ms: i64,
    /// The workspaces folder, created and resolved once (see [`SessionHub::roots`]).
    workspaces: std::sync::OnceLock<std::path::PathBuf>,
}

impl SessionHub {
    /// A hub over the given parts, alone in its process's coordination (see
    /// [`SessionHub::with_coordinator`]). Call [`SessionHub::resume_pending`] once at start-up.
    pub fn new(parts: EngineParts) -> Self {
        Self::with_coordinator(parts, workmate_coordinator::InProcess::shared())
    }

    /// A hub over the given parts that shares live events and per-minute limits with other
    /// replicas through `coordinator`.
    pub fn with_coordinator(
        parts: EngineParts,
        coordinator: Arc<dyn workmate_coordinator::Coordinator>,
    ) -> Self {
        let hot_histories = parts.config.hot_histories;
        let started_ms = parts.store.clock_ms();
        let replica = parts.config.replica.clone();
        let deps = Deps {
            store: parts.store,
            providers: parts.providers,
            tools: Arc::new(parts.tools),
            sources: Arc::default(),
            permissions: parts.permissions,
            config: parts.config,
            clock: parts.clock,
            waiters: InboxWaiters::default(),
            coordinator,
            shutdown: CancellationToken::new(),
            observer: Arc::default(),
        };
        Self {
            inner: Arc::new(Inner {
                shutdown: deps.shutdown.clone(),
                deps: Arc::new(deps),
                sessions: Mutex::default(),
                tasks: TaskTracker::new(),
                hot: hot::HotHistories::new(hot_histories),
                replica,
                started_ms,
                workspaces: std::sync::OnceLock::new(),
            }),
        }
    }

    /// The store the hub writes to. Surfaces never reach it through the hub: they submit
    /// commands, and read through their own handle.
    pub(crate) fn store(&self) -> &Store {
        &self.inner.deps.store
    }

    /// What the tool `name` declares about itself (its risk, its target argument), if the hub
    /// has such a tool; surfaces validate standing rules against it.
    pub fn tool_metadata(&self, name: &str) -> Option<workmate_tools::ToolMetadata> {
        self.inner
            .deps
            .tools
            .metadata(name)
            .or_else(|| self.inner.deps.sources.metadata(name))
    }

    /// Adds a source of tools that depend on the turn (a tenant's MCP servers, a person's
    /// connectors); install them before sessions run.
    pub fn add_tool_source(&self, source: Arc<dyn workmate_tools::ToolSource>) {
        self.inner.deps.sources.add(source);
    }

    /// What this hub shares with other replicas.
    pub fn coordinator(&self) -> &Arc<dyn workmate_coordinator::Coordinator> {
        &self.inner.deps.coordinator
    }

    /// The engine settings.
    pub fn config(&self) -> &EngineConfig {
        &self.inner.deps.config
    }

    /// Creates the session at `new.key`, or returns the one already there.
    pub async fn create_session(
        &self,
        tenant: &TenantId,
        new: &NewSession,
    ) -> Result<SessionRecord> {
        Ok(self.open_session(tenant, new).await?.0)
    }

    /// [`SessionHub::create_session`], and whether this call created the session. A session
    /// created here is created under this process's lease, and its runtime starts from what was
    /// written (record, lease, empty history), so neither its first event nor its first turn
    /// reads the store.
    pub async fn open_session(
        &self,
        tenant: &TenantId,
        new: &NewSession,
    ) -> Result<(SessionRecord, bool)> {
        let until = self.lease_until();
        let sessions = self.store().sessions();
        let created = sessions
            .create_leased(tenant, new, &self.inner.replica, until)
            .await?;
        let Some((record, token)) = created else {
            let record = sessions
                .find_by_key(tenant, &new.key)
                .await?
                .ok_or_else(|| {
                    Error::Store(workmate_store::Error::NotFound {
                        what: format!("session at {:?}, whose key was just taken", new.key),
                    })
                })?;
            return Ok((record, false));
        };
        let runtime = self.adopt_created(tenant, &record, (token, until));
        let emit = Emitter {
            store: self.store().clone(),
            tenant: tenant.clone(),
            session: record.id.clone(),
            turn: None,
            runtime,
            clock: Arc::clone(&self.inner.deps.clock),
            observer: Arc::clone(&self.inner.deps.observer),
        };
        emit.state(EventKind::SessionCreated {
            owner: record.owner.clone(),
            surface: record.key.surface,
            title: record.title.clone(),
            model: record.model.clone(),
            mode: record.mode,
            unattended: record.unattended,
        })?;
        Ok((record, true))
    }

    /// Marks the session attended or unattended (whether its prompts wait in the inbox rather
    /// than for someone watching). The caller has checked who may.
    pub async fn set_unattended(
        &self,
        tenant: &TenantId,
        session: &SessionId,
        unattended: bool,
    ) -> Result<()> {
        let step = crate::emitter::Step {
            change: workmate_store::SessionChange {
                unattended: Some(unattended),
                ..workmate_store::SessionChange::default()
            },
            ..crate::emitter::Step::default()
        };
        self.emitter(tenant, session)
            .await?
            .write(step)?
            .durable()
            .await?;
        Ok(())
    }

    /// Live events of a session from now on. Replay earlier state events from the store once
    /// this returns: every event published before it is stored by then.
    pub async fn subscribe(
        &self,
        tenant: &TenantId,
        session: &SessionId,
    ) -> Result<broadcast::Receiver<Arc<Event>>> {
        let runtime = self.runtime(tenant, session).await?;
        let receiver = runtime.subscribe();
        self.relay_other_replicas(tenant, session, &runtime).await;
        // A failed step is the turn's to report; what was stored can still be replayed.
        let _ = runtime.flushed().await;
        Ok(receiver)
    }

    /// Live events of a session from now on, without waiting for its queued steps, and the
    /// `seq` of the newest state event published before: a subscriber that needs no event up
    /// to that `seq` replays nothing; one that does calls [`SessionHub::flushed`] before it
    /// reads them from the store.
    pub async fn subscribe_live(
        &self,
        tenant: &TenantId,
        session: &SessionId,
    ) -> Result<(broadcast::Receiver<Arc<Event>>, u64)> {
        let runtime = self.runtime(tenant, session).await?;
        let receiver = runtime.subscribe();
        self.relay_other_replicas(tenant, session, &runtime).await;
        // Read after subscribing: a later event reaches the receiver.
        Ok((receiver, runtime.last_seq()))
    }

    /// Resolves once every step of the session queued so far is stored (or failed): reads of
    /// the store see everything published before.
    pub async fn flushed(&self, tenant: &TenantId, session: &SessionId) -> Result<()> {
        let key = (tenant.clone(), session.clone());
        let live = self.lock_sessions().get(&key).cloned();
        // A session without a runtime in this process has nothing queued here.
        match live {
            Some(runtime) => runtime.flushed().await.map_err(Error::Log),
            None => Ok(()),
        }
    }

    /// Whether a turn runs in the session (in this process).
    pub async fn is_running(&self, tenant: &TenantId, session: &SessionId) -> Result<bool> {
        Ok(self.runtime(tenant, session).await?.is_running())
    }

    /// Resolves when no turn runs in the session; what it wrote may still be on its way to the
    /// store (a later turn and every read through the hub see it anyway). See
    /// [`SessionHub::wait_idle`] to wait for the store too.
    pub async fn wait_turn(&self, tenant: &TenantId, session: &SessionId) -> Result<()> {
        self.runtime(tenant, session).await?.idle().await;
        Ok(())
    }

    /// Resolves when no turn runs in the session and what it wrote is stored.
    pub async fn wait_idle(&self, tenant: &TenantId, session: &SessionId) -> Result<()> {
        let runtime = self.runtime(tenant, session).await?;
        runtime.idle().await;
        // A failed step ended the turn with an error event of its own.
        let _ = runtime.flushed().await;
        Ok(())
    }

    /// Records an answer to a parked prompt. The first answer wins; the winner's item is returned
    /// to everyone. A winning answer wakes the waiting turn, or resumes the session if none waits.
    pub async fn resolve(
        &self,
        tenant: &TenantId,
        item: &InboxItemId,
        resolution: &Resolution,
        actor: &Actor,
        via: Surface,
    ) -> Result<ResolveOutcome> {
        let Some(found) = self.store().inbox().get(tenant, item).await? else {
            return Ok(ResolveOutcome::NotFound);
        };
        self.check_resolver(tenant, &found, resolution, actor, via)
            .await?;
        let resolved = |found: &workmate_store::InboxItem| {
            Some(EventKind::InboxItemResolved {
                item_id: found.id.clone(),
                item_kind: found.kind,
                tool_call_id: found.tool_call_id.clone(),
                // What was stored: a quorum's agreed choice may differ from this answer's.
                resolution: found
                    .resolution
                    .clone()
                    .unwrap_or_else(|| resolution.clone()),
                resolved_by: actor.clone(),
                via,
            })
        };
        // The answer is stored (and so wins) before anyone is told; the event announcing it
        // follows in the session's own log. An approval of an item that needs several is
        // counted first, and resolves it only when it completes the quorum.
        let outcome = match self
            .count_approval(tenant, &found, resolution, actor, via)
            .await?
        {
            Some(outcome @ (ResolveOutcome::Counted { .. } | ResolveOutcome::NotFound)) => {
                return Ok(outcome);
            }
            Some(outcome) => outcome,
            None => {
                self.store()
                    .inbox()
                    .resolve(tenant, item, resolution, &actor.user_id, via)
                    .await?
            }
        };
        if let ResolveOutcome::Resolved(item) = &outcome {
            if item
                .data
                .get(workmate_tools::automations::RULES_ITEM)
                .is_some()
            {
                // No turn waits on it: the answer grants or drops an automation's rules.
                self.settle_rules(tenant, item, resolution, actor).await?;
                return Ok(outcome);
            }
            if let Some(event) = resolved(item) {
                self.announce_resolution(tenant, item, event).await?;
            }
        }
        Ok(outcome)
    }

    /// Tells an answered item's session: the `inbox_item_resolved` event, then the waiting turn
    /// is woken (or the session resumed when no turn runs).
    pub(super) async fn announce_resolution(
        &self,
        tenant: &TenantId,
        item: &workmate_store::InboxItem,
        event: EventKind,
    ) -> Result<()> {
        let emit = match self.emitter(tenant, &item.session_id).await {
            Ok(emit) => emit,
            // Another process drives the session: its parked turn reads the answer from the
            // store (it polls the inbox), and announces what follows.
            Err(Error::DrivenElsewhere(_)) => return Ok(()),
            Err(e) => return Err(e),
        };
        emit.state(event)?;
        let runtime = emit.runtime;
        self.inner.deps.waiters.wake_all();
        if !runtime.is_running() {
            self.resume_session(tenant, &item.session_id).await?;
        }
        Ok(())
    }

    /// Resumes every session that has tool calls without an outcome (after a restart).
    pub async fn resume_pending(&self) -> Result<usize> {
        let sessions = self
            .store()
            .tool_calls()
            .sessions_with_open_calls(10_000)
            .await?;
        let mut resumed = 0;
        for (tenant, session) in sessions {
            if self.resume_session(&tenant, &session).await? {
                resumed += 1;
            }
        }
        Ok(resumed)
    }

    /// Resumes one session if it has tool calls left unanswered (a run adopted from a process
    /// that stopped); `false` if there was nothing to resume or a turn already runs.
    pub async fn resume_if_pending(&self, tenant: &TenantId, session: &SessionId) -> Result<bool> {
        self.resume_session(tenant, session).await
    }

    /// Forgets a session's live state when nothing uses it: no turn, no subscriber, and no other
    /// task holding it (checked under the map's lock, where every other holder got its copy).
    pub(super) fn evict_if_unused(
        &self,
        tenant: &TenantId,
        session: &SessionId,
        runtime: &Arc<SessionRuntime>,
    ) {
        let key = (tenant.clone(), session.clone());
        let mut sessions = self.lock_sessions();
        // A runtime with steps still queued keeps the session's counters: a new one would read
        // them from the store too early.
        let unused = sessions.get(&key).is_some_and(|held| {
            Arc::ptr_eq(held, runtime)
                && Arc::strong_count(held) == 2
                && runtime.subscribers() == 0
                && !runtime.is_running()
                && runtime.is_flushed()
        });
        if unused {
            sessions.remove(&key);
        }
    }

    /// The trace context of turn `turn` of a session, the newest turn run in this process:
    /// what shows the turn (a chat card) parents its own spans on it, so they join the turn's
    /// trace, even after the turn ended.
    pub fn turn_trace(
        &self,
        tenant: &TenantId,
        session: &SessionId,
        turn: &workmate_protocol::TurnId,
    ) -> Option<opentelemetry::Context> {
        self.lock_sessions()
            .get(&(tenant.clone(), session.clone()))
            .and_then(|runtime| runtime.turn_trace(turn))
    }

    /// Installs what watches the engine (the server's metrics); call it before sessions run.
    /// A second observer is refused (`false`), the first stays.
    pub fn observe(&self, observer: Arc<dyn crate::observe::EngineObserver>) -> bool {
        self.inner.deps.observer.install(observer)
    }

    /// Stops every running turn and waits for them to end.
    pub async fn shutdown(&self) {
        self.inner.shutdown.cancel();
        let runtimes: Vec<_> = self.lock_sessions().values().cloned().collect();
        for runtime in runtimes {
            runtime.interrupt();
        }
        self.inner.tasks.close();
        self.inner.tasks.wait().await;
    }

    /// The session's live runtime, created on first use.
    async fn runtime(&self, tenant: &TenantId, session: &SessionId) -> Result<Arc<SessionRuntime>> {
        let key = (tenant.clone(), session.clone());
        if let Some(runtime) = self.lock_sessions().get(&key) {
            // A runtime whose log failed is replaced once its turn is over: its counters are
            // no longer the store's.
            if runtime.is_running() || runtime.failure().is_none() {
                runtime.touch(self.inner.deps.clock.now_ms());
                return Ok(Arc::clone(runtime));
            }
        }
        let record = self.load(tenant, session).await?;
        let mut sessions = self.lock_sessions();
        let fanout = self.fanout();
        let fresh = || Arc::new(SessionRuntime::new(record.clone(), fanout.clone()));
        let runtime = sessions.entry(key).or_insert_with(fresh);
        if runtime.failure().is_some() && !runtime.is_running() {
            tracing::warn!(tenant = %tenant, session = %session, "Reloading a session whose log failed.");
            *runtime = fresh();
        }
        runtime.touch(self.inner.deps.clock.now_ms());
        Ok(Arc::clone(runtime))
    }

    /// The runtime of a session this call's process has just created, from what it wrote:
    /// the record, the lease and, when the runtime is new, an empty history (kept like a
    /// finished turn's). A runtime some other task already loaded is kept as it is.
    fn adopt_created(
        &self,
        tenant: &TenantId,
        record: &SessionRecord,
        (token, until): (u64, i64),
    ) -> Arc<SessionRuntime> {
        let key = (tenant.clone(), record.id.clone());
        let mut fresh = false;
        let fanout = self.fanout();
        let runtime = {
            let mut sessions = self.lock_sessions();
            let runtime = sessions.entry(key).or_insert_with(|| {
                fresh = true;
                Arc::new(SessionRuntime::new(record.clone(), fanout))
            });
            Arc::clone(runtime)
        };
        runtime.set_lease(token, until);
        if fresh {
            self.inner
                .hot
                .keep((tenant, &record.id), &runtime, Vec::new());
        }
        runtime
    }

    /// The session as of its newest queued step (kept by its runtime: no read).
    async fn record(&self, tenant: &TenantId, session: &SessionId) -> Result<SessionRecord> {
        Ok(self.runtime(tenant, session).await?.record())
    }

    async fn load(&self, tenant: &TenantId, session: &SessionId) -> Result<SessionRecord> {
        self.store()
            .sessions()
            .get(tenant, session)
            .await?
            .ok_or_else(|| Error::SessionNotFound(session.clone()))
    }

    /// An emitter for writes outside a turn, under the session's lease.
    async fn emitter(&self, tenant: &TenantId, session: &SessionId) -> Result<Emitter> {
        let runtime = self.runtime(tenant, session).await?;
        self.hold_lease(tenant, session, &runtime).await?;
        Ok(Emitter {
            store: self.store().clone(),
            tenant: tenant.clone(),
            session: session.clone(),
            turn: None,
            runtime,
            clock: Arc::clone(&self.inner.deps.clock),
            observer: Arc::clone(&self.inner.deps.observer),
        })
    }

    fn lock_sessions(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<(TenantId, SessionId), Arc<SessionRuntime>>> {
        self.inner
            .sessions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }
}
