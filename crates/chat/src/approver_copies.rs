//! Approvers told of a prompt that waits for them: a copy of its approval card, buttons and all,
//! in each approver's direct chat with the bot, kept up to date like the card in the thread, so
//! every copy shows who answered once someone did.
//!
//! Invariants: copies go only for prompts the engine says wait for approvers
//! ([`workmate_engine::SessionHub::waits_for_approvers`]), only to the tenant's active approvers
//! and admins with an account on the platform who did not turn notices off (`/workmate notify
//! off`), never to the person who asked; a copy is one card per prompt and approver, posted once
//! and updated from then on through the coalescer and the card store (any replica, after a
//! restart too); a prompt already decided is never posted as a new copy, only copies that exist
//! are updated. The answer itself goes through the engine's authority rule like any click.
//! A reminder of a prompt that still waits goes to the same people, in the same chats
//! ([`ApproverCopies::approver_chats`]), as a notice below their copy.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio_util::task::TaskTracker;
use tracing::{debug, warn};
use workmate_adapter::{CardId, CardStore, ChatTarget, Coalescer, Platform};
use workmate_cards::Card;
use workmate_engine::SessionHub;
use workmate_protocol::{InboxItemId, SessionId, TenantId};
use workmate_store::{InboxItem, Store};

use crate::cards_store::StoreCards;

/// One approver's copy of a prompt.
#[derive(Clone, Debug)]
struct Copy {
    id: CardId,
    target: ChatTarget,
}

/// What is known of one prompt's copies.
#[derive(Debug, Default)]
struct Entry {
    /// Where its copies go, once worked out.
    to: Option<Vec<Copy>>,
    /// Whether working them out has started.
    started: bool,
    /// The newest state of its card, and whether it still waits.
    latest: Option<(Card, bool)>,
}

/// The copies of one platform's prompts.
#[derive(Debug)]
pub(crate) struct ApproverCopies {
    hub: SessionHub,
    store: Store,
    platform: Arc<dyn Platform>,
    coalescer: Arc<Coalescer>,
    items: Mutex<HashMap<(TenantId, InboxItemId), Entry>>,
}

impl ApproverCopies {
    pub(crate) fn new(
        hub: SessionHub,
        store: Store,
        platform: Arc<dyn Platform>,
        coalescer: Arc<Coalescer>,
    ) -> Self {
        Self {
            hub,
            store,
            platform,
            coalescer,
            items: Mutex::default(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<(TenantId, InboxItemId), Entry>> {
        self.items.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The approval card of `item` in `session` changed to `card` (`pending` while it waits):
    /// its copies follow, worked out first on `tracker` if they are not known yet.
    pub(crate) fn show(
        self: &Arc<Self>,
        tracker: &TaskTracker,
        tenant: &TenantId,
        session: &SessionId,
        item: &InboxItemId,
        card: Card,
        pending: bool,
    ) {
        let key = (tenant.clone(), item.clone());
        let mut items = self.lock();
        let entry = items.entry(key.clone()).or_default();
        if let Some(to) = &entry.to {
            self.submit(to, &card);
            if !pending {
                items.remove(&key);
            }
            return;
        }
        entry.latest = Some((card, pending));
        if entry.started {
            return;
        }
        entry.started = true;
        drop(items);
        let this = Arc::clone(self);
        let session = session.clone();
        tracker.spawn(async move {
            let to = match this.copies(&key.0, &session, &key.1).await {
                Ok(to) => to,
                Err(e) => {
                    warn!(error = %e, "Cannot tell the approvers of a waiting prompt.");
                    Vec::new()
                }
            };
            this.settle(&key, to).await;
        });
    }

    /// Records where `key`'s copies go and sends them its newest card: all of them while it
    /// waits, else only those posted before.
    async fn settle(&self, key: &(TenantId, InboxItemId), to: Vec<Copy>) {
        let pending = self
            .lock()
            .get(key)
            .and_then(|e| e.latest.as_ref().map(|(_, pending)| *pending))
            .unwrap_or(false);
        let mut kept = Vec::new();
        for copy in to {
            let posted = StoreCards(self.store.clone())
                .get(&copy.id, self.platform.surface())
                .await
                .ok()
                .flatten()
                .is_some();
            if pending || posted {
                kept.push(copy);
            }
        }
        let mut items = self.lock();
        let Some(entry) = items.get_mut(key) else {
            return;
        };
        let latest = entry.latest.take();
        if let Some((card, _)) = &latest {
            self.submit(&kept, card);
        }
        if latest.is_some_and(|(_, pending)| !pending) {
            items.remove(key);
        } else {
            entry.to = Some(kept);
        }
    }

    fn submit(&self, to: &[Copy], card: &Card) {
        for copy in to {
            if let Err(e) =
                self.coalescer
                    .submit(copy.id.clone(), copy.target.clone(), card.clone())
            {
                warn!(error = %e, "Cannot queue an approver's copy of a prompt.");
            }
        }
    }

    /// Where the copies of `item` go (see the module docs).
    async fn copies(
        &self,
        tenant: &TenantId,
        session: &SessionId,
        item: &InboxItemId,
    ) -> crate::Result<Vec<Copy>> {
        let Some(stored) = self.store.inbox().get(tenant, item).await? else {
            return Ok(Vec::new());
        };
        let copies: Vec<Copy> = self
            .approver_chats(&stored)
            .await?
            .into_iter()
            .map(|(account, target)| Copy {
                id: CardId {
                    tenant: tenant.clone(),
                    session: session.clone(),
                    card_key: format!("approver:{item}:{account}"),
                },
                target,
            })
            .collect();
        debug!(item = %item, copies = copies.len(), "Approvers told of a waiting prompt.");
        Ok(copies)
    }

    /// The direct chats (by account on this platform) of the approvers told of `item`: none
    /// unless it waits for approvers; never the person who asked, nor anyone who turned notices
    /// off.
    pub(crate) async fn approver_chats(
        &self,
        item: &InboxItem,
    ) -> crate::Result<Vec<(String, ChatTarget)>> {
        let tenant = &item.tenant_id;
        if !self.hub.waits_for_approvers(tenant, item).await? {
            return Ok(Vec::new());
        }
        let approvers = self
            .store
            .approvers()
            .to_notify(tenant, self.platform.surface().as_str())
            .await?;
        Ok(approvers
            .into_iter()
            .filter(|(user, _)| item.requested_by.as_ref() != Some(user))
            .filter_map(|(_, account)| {
                let target = self.platform.direct_target(&account)?;
                Some((account, target))
            })
            .collect())
    }
}
