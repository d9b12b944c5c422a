//! Card pumps: one task per live session that turns the hub's events into card updates, the
//! same for every platform.
//!
//! Invariants: at most one pump runs per session; a pump is subscribed before the command that
//! starts it is submitted (so it misses no event), and it first folds the session's stored events
//! so a pump restarted by a late click still knows the cards it updates: from the view an idle
//! pump of the session left behind (only the events after it), else from the first event. The
//! pump of a session its caller has just created reads nothing when the session's only event is
//! still its `session_created`, which no card shows. A pump ends after
//! [`Pumps::idle`] without events unless it was asked for again in that time (checked under the
//! map's lock, which [`Pumps::ensure`] also takes), and every pump is joined on shutdown.
//! A new card goes to the target of the newest [`Pumps::ensure`] that carried an answer handle
//! ([`ChatTarget::reply`]), except a turn's cards (its segments and prompts): they go to the
//! target that was newest when the turn started (bound at its `turn_start`, forgotten at its
//! `turn_end`), so on a platform that answers a message only through its handle a turn's cards
//! answer the message that started it, whatever anyone writes meanwhile. A card is opened only
//! once the event that opens it is stored, so a crash never leaves a card of a turn or a prompt
//! the store does not know. A pump started for a session a killed process drove
//! ([`Pumps::redraw`]) first sends its recent cards again as they stand.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::broadcast::{self, error::RecvError};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::{debug, warn};
use workmate_adapter::{CardId, ChatTarget, Coalescer, Platform};
use workmate_cards::{CardRef, PagesShown, PromptState, SessionView, approval_card, cards_for};
use workmate_engine::SessionHub;
use workmate_protocol::{Event, EventKind, SessionId, TenantId, TurnId};
use workmate_store::Store;

use crate::approver_copies::ApproverCopies;

/// Events read from the store per page when a pump catches up.
const PAGE: u32 = 500;
/// Views of stopped pumps kept for the next pump of their session, most recently used first.
const KEPT_VIEWS: u64 = 512;

type Key = (TenantId, SessionId);

/// A running pump, as its session's entry in the map.
#[derive(Debug)]
struct Running {
    /// Grows whenever the pump is asked for; an idle pump whose count did not move ends.
    touched: u64,
    /// Where its new cards go.
    target: ChatTarget,
    /// Where each running turn's cards go: the target when the turn started, so a turn answers
    /// the message that started it whatever else was said meanwhile.
    turns: HashMap<TurnId, ChatTarget>,
}

/// The running pumps of one platform.
#[derive(Debug)]
pub(crate) struct Pumps {
    hub: SessionHub,
    store: Store,
    coalescer: Arc<Coalescer>,
    /// Approvers' copies of the prompts that wait for them.
    copies: Arc<ApproverCopies>,
    /// The platform's answer budget: a longer answer is shown as several cards.
    answer_budget: usize,
    idle: Duration,
    running: Mutex<HashMap<Key, Running>>,
    /// What idle pumps had folded, so their session's next pump goes on from there.
    kept: moka::sync::Cache<Key, SessionView>,
    tracker: TaskTracker,
    stop: CancellationToken,
}

/// Why a pump starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Start {
    /// Asked for (a delivery, a click, a recovered turn).
    Wanted,
    /// For a session its caller has just created.
    Created,
    /// For a session a killed process drove: the cards changed in this last span of its events
    /// are sent again.
    Redraw(Duration),
}

impl Running {
    /// Asked for again, with `target`: a target with an answer handle becomes the new cards'
    /// target; one without (a click, a restart) leaves the newest handle in place.
    fn wanted(&mut self, target: ChatTarget) {
        self.touched += 1;
        if target.reply.is_some() {
            self.target = target;
        }
    }
}

impl Pumps {
    pub(crate) fn new(
        hub: SessionHub,
        store: Store,
        platform: Arc<dyn Platform>,
        coalescer: Arc<Coalescer>,
        idle: Duration,
    ) -> Self {
        let answer_budget = platform.answer_budget();
        let copies = Arc::new(ApproverCopies::new(
            hub.clone(),
            store.clone(),
            platform,
            Arc::clone(&coalescer),
        ));
        Self {
            hub,
            store,
            coalescer,
            copies,
            answer_budget,
            idle,
            running: Mutex::default(),
            kept: moka::sync::Cache::new(KEPT_VIEWS),
            tracker: TaskTracker::new(),
            stop: CancellationToken::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<Key, Running>> {
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How many pumps run.
    pub(crate) fn active(&self) -> usize {
        self.lock().len()
    }

    /// How many views of stopped pumps are kept.
    pub(crate) fn kept_views(&self) -> u64 {
        self.kept.entry_count()
    }

    /// Makes sure a pump runs for the session, posting its cards to `target`. When this returns,
    /// every event the session emits from now on reaches a pump.
    pub(crate) async fn ensure(
        self: &Arc<Self>,
        tenant: &TenantId,
        session: &SessionId,
        target: ChatTarget,
    ) -> crate::Result<()> {
        self.start(tenant, session, target, Start::Wanted).await
    }

    /// [`Pumps::ensure`] for a session the caller has just created (see the module docs).
    pub(crate) async fn ensure_created(
        self: &Arc<Self>,
        tenant: &TenantId,
        session: &SessionId,
        target: ChatTarget,
    ) -> crate::Result<()> {
        self.start(tenant, session, target, Start::Created).await
    }

    /// [`Pumps::ensure`] for a session a killed process drove: every card changed in the last
    /// `window` of its events (by their time, up to its newest) is sent again as it stands, so
    /// a card whose last update died with the process reaches its final state, and a card it
    /// never posted is posted. A pump already running shows the session's cards already.
    pub(crate) async fn redraw(
        self: &Arc<Self>,
        tenant: &TenantId,
        session: &SessionId,
        target: ChatTarget,
        window: Duration,
    ) -> crate::Result<()> {
        self.start(tenant, session, target, Start::Redraw(window))
            .await
    }

    async fn start(
        self: &Arc<Self>,
        tenant: &TenantId,
        session: &SessionId,
        target: ChatTarget,
        how: Start,
    ) -> crate::Result<()> {
        let key = (tenant.clone(), session.clone());
        if self.touch(&key, &target) {
            return Ok(());
        }
        if self.stop.is_cancelled() {
            return Err(workmate_engine::Error::ShuttingDown.into());
        }
        let (rx, published) = self.hub.subscribe_live(tenant, session).await?;
        let mut view = self.kept.remove(&key).unwrap_or_default();
        // The first event of a session is its `session_created` (seq 1).
        let nothing_shown = how == Start::Created && published <= 1 && view.last_seq() == 0;
        // What each stored event changed, with its time, when the cards are to be redrawn.
        let mut changed: Vec<(i64, CardRef)> = Vec::new();
        if !nothing_shown {
            for event in self.stored_after(tenant, session, view.last_seq()).await? {
                let refs = view.apply(&event);
                if matches!(how, Start::Redraw(_)) {
                    changed.extend(refs.into_iter().map(|r| (event.at_ms, r)));
                }
            }
        }
        if let Start::Redraw(window) = how {
            let newest = changed.iter().map(|(at, _)| *at).max().unwrap_or(0);
            let since =
                newest.saturating_sub(i64::try_from(window.as_millis()).unwrap_or(i64::MAX));
            let mut seen = HashSet::new();
            let recent: Vec<CardRef> = changed
                .into_iter()
                .filter(|(at, r)| *at >= since && seen.insert(r.clone()))
                .map(|(_, r)| r)
                .collect();
            self.resend(&key, &mut view, &target, &recent);
        }
        {
            let mut running = self.lock();
            if let Some(entry) = running.get_mut(&key) {
                // Another caller started one meanwhile.
                entry.wanted(target);
                return Ok(());
            }
            running.insert(
                key.clone(),
                Running {
                    touched: 0,
                    target,
                    turns: HashMap::new(),
                },
            );
        }
        debug!(tenant = %tenant, session = %session, "Card pump started.");
        let pump = Arc::clone(self);
        self.tracker
            .spawn(async move { pump.run(key, view, rx).await });
        Ok(())
    }

    /// Marks a running pump as wanted; false when none runs.
    fn touch(&self, key: &Key, target: &ChatTarget) -> bool {
        match self.lock().get_mut(key) {
            Some(entry) => {
                entry.wanted(target.clone());
                true
            }
            None => false,
        }
    }

    /// Where each card in `changed` goes: a turn's cards (its segments and prompts) to where
    /// the turn started (bound at its `turn_start`, forgotten at its end), any other to the
    /// session's newest target. `None` when the pump no longer runs.
    fn targets(
        &self,
        key: &Key,
        event: &Event,
        view: &SessionView,
        changed: &[CardRef],
    ) -> Option<Vec<ChatTarget>> {
        let mut running = self.lock();
        let entry = running.get_mut(key)?;
        if let (EventKind::TurnStart { .. }, Some(started)) = (&event.kind, &event.turn_id) {
            entry
                .turns
                .entry(started.clone())
                .or_insert_with(|| entry.target.clone());
        }
        let targets = changed
            .iter()
            .map(|card| {
                turn_of(view, card)
                    .and_then(|turn| entry.turns.get(turn))
                    .unwrap_or(&entry.target)
                    .clone()
            })
            .collect();
        if let (EventKind::TurnEnd { .. }, Some(ended)) = (&event.kind, &event.turn_id) {
            entry.turns.remove(ended);
        }
        Some(targets)
    }

    async fn stored_after(
        &self,
        tenant: &TenantId,
        session: &SessionId,
        mut after: u64,
    ) -> crate::Result<Vec<Event>> {
        // Events are published as their step is queued: what was published is stored first.
        self.hub.flushed(tenant, session).await?;
        let mut out = Vec::new();
        loop {
            let page = self
                .store
                .events()
                .list_after(tenant, session, after, PAGE)
                .await?;
            let full = page.len() >= PAGE as usize;
            if let Some(last) = page.last() {
                after = last.seq;
            }
            out.extend(page);
            if !full {
                return Ok(out);
            }
        }
    }

    async fn run(
        self: Arc<Self>,
        key: Key,
        mut view: SessionView,
        mut rx: broadcast::Receiver<Arc<Event>>,
    ) {
        let (tenant, session) = &key;
        let mut seen = 0;
        let mut pages = PagesShown::default();
        // The cards this pump has opened (see `show`).
        let mut opened = HashSet::new();
        loop {
            let received = tokio::select! {
                () = self.stop.cancelled() => break,
                received = tokio::time::timeout(self.idle, rx.recv()) => received,
            };
            match received {
                Ok(Ok(event)) => {
                    self.show(&mut view, &mut pages, &mut opened, &event, &key)
                        .await;
                }
                Ok(Err(RecvError::Lagged(missed))) => {
                    warn!(tenant = %tenant, session = %session, missed, "Card pump lagged; catching up from the store.");
                    match self.stored_after(tenant, session, view.last_seq()).await {
                        Ok(events) => {
                            for event in events {
                                self.show(&mut view, &mut pages, &mut opened, &event, &key)
                                    .await;
                            }
                        }
                        Err(e) => warn!(error = %e, "Cannot read the session's events."),
                    }
                }
                Ok(Err(RecvError::Closed)) => break,
                Err(_idle) => {
                    let mut running = self.lock();
                    match running.get(&key) {
                        Some(entry) if entry.touched != seen => seen = entry.touched,
                        _ => {
                            running.remove(&key);
                            drop(running);
                            debug!(tenant = %tenant, session = %session, "Card pump idle; stopped.");
                            self.kept.insert(key, view);
                            return;
                        }
                    }
                }
            }
        }
        self.lock().remove(&key);
    }

    /// Folds one event and hands every card it changed to the coalescer. A card the pump has
    /// not opened yet (a turn's, a prompt's) waits until the session's queued steps are stored:
    /// events are published as their step is queued, and a card posted for a turn or a prompt
    /// whose step a crash then lost would stay in the thread beside the card of the turn that
    /// runs the message again.
    async fn show(
        &self,
        view: &mut SessionView,
        pages: &mut PagesShown,
        opened: &mut HashSet<CardRef>,
        event: &Event,
        key: &Key,
    ) {
        let changed = view.apply(event);
        if changed.is_empty() {
            return;
        }
        let mut opens = false;
        for card in &changed {
            opens |= opened.insert(card.clone());
        }
        if opens && let Err(e) = self.hub.flushed(&key.0, &key.1).await {
            warn!(error = %e, "A new card's event is not stored; the card is not shown.");
            return;
        }
        let Some(targets) = self.targets(key, event, view, &changed) else {
            return;
        };
        // A state event's cards join the trace of the turn that made them.
        let span = event
            .turn_id
            .as_ref()
            .filter(|_| event.kind.is_state())
            .and_then(|turn| self.hub.turn_trace(&key.0, &key.1, turn))
            .map(|turn| {
                let span =
                    tracing::info_span!(parent: None, "card.update", event = event.kind.name());
                crate::trace::continue_with(&span, turn);
                span
            });
        let _entered = span.as_ref().map(tracing::Span::enter);
        for (changed, target) in changed.into_iter().zip(targets) {
            // In a group, a personal conversation's cards share the chat with other people's.
            view.name_people(target.person.is_some());
            if let CardRef::Approval(item) = &changed
                && let Some(approval) = view.approval(item)
            {
                let pending = matches!(approval.state, PromptState::Pending);
                self.copies.show(
                    &self.tracker,
                    &key.0,
                    &key.1,
                    item,
                    approval_card(approval),
                    pending,
                );
            }
            let cards = pages.settle(cards_for(view, &changed, self.answer_budget));
            for (card_key, card) in cards {
                let id = CardId {
                    tenant: key.0.clone(),
                    session: key.1.clone(),
                    card_key,
                };
                if let Err(e) = self.coalescer.submit(id, target.clone(), card) {
                    warn!(error = %e, "Cannot queue a card update.");
                }
            }
        }
    }

    /// Hands the current state of each card in `refs` to the coalescer, to `target`.
    fn resend(&self, key: &Key, view: &mut SessionView, target: &ChatTarget, refs: &[CardRef]) {
        view.name_people(target.person.is_some());
        let mut pages = PagesShown::default();
        for changed in refs {
            for (card_key, card) in pages.settle(cards_for(view, changed, self.answer_budget)) {
                let id = CardId {
                    tenant: key.0.clone(),
                    session: key.1.clone(),
                    card_key,
                };
                if let Err(e) = self.coalescer.submit(id, target.clone(), card) {
                    warn!(error = %e, "Cannot queue a card to redraw.");
                }
            }
        }
    }

    /// The approvers' copies of this platform's prompts.
    pub(crate) fn approver_copies(&self) -> &ApproverCopies {
        &self.copies
    }

    /// Stops every pump and waits for them to end.
    pub(crate) async fn shutdown(&self) {
        self.stop.cancel();
        self.tracker.close();
        self.tracker.wait().await;
    }
}

/// The turn a card belongs to: a segment's, or the turn a prompt stopped.
fn turn_of<'a>(view: &'a SessionView, card: &'a CardRef) -> Option<&'a TurnId> {
    match card {
        CardRef::Turn(turn) | CardRef::TurnPart(turn, _) => Some(turn),
        CardRef::Approval(item) => view.approval(item)?.turn_id.as_ref(),
        CardRef::Question(item) => view.question(item)?.turn_id.as_ref(),
        CardRef::Plan(item) => view.plan(item)?.turn_id.as_ref(),
        CardRef::Notice(_) => None,
    }
}
