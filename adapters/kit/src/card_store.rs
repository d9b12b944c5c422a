//! Where posted cards are remembered: the persistence side of the coalescer.
//!
//! Invariant: a card recorded here is updated, never posted again, by any process that later
//! submits the same [`CardId`]; and `next_version` hands out strictly increasing numbers per card.
//! The trait exists so the coalescer can be tested with paused time against [`MemoryCardStore`]
//! (a SQLite store runs on blocking threads, which paused-time tests cannot drive).

use std::collections::HashMap;
use std::fmt;
use std::sync::{Mutex, PoisonError};

use workmate_protocol::{SessionId, TenantId};
use workmate_store::{CardMessage, Store};

use crate::{BoxFuture, Error, PostedCard, Result};

/// One card of one session: the coalescer's unit of pacing.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CardId {
    /// The tenant the session belongs to.
    pub tenant: TenantId,
    /// The session.
    pub session: SessionId,
    /// Which card of the session (e.g. `turn:<turn id>`, `inbox:<item id>`).
    pub card_key: String,
}

impl fmt::Display for CardId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.session, self.card_key)
    }
}

/// A card as stored: where it was posted and the last update version used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredCard {
    /// Where it is.
    pub posted: PostedCard,
    /// The last update version handed out (0 right after posting).
    pub version: i64,
}

/// Persistence of posted cards, per platform.
pub trait CardStore: Send + Sync + fmt::Debug {
    /// Where `card` was posted on `platform`, if it was.
    fn get<'a>(
        &'a self,
        card: &'a CardId,
        platform: &'a str,
    ) -> BoxFuture<'a, Result<Option<StoredCard>>>;

    /// Records that `card` was posted as `posted` (version 0); recording again moves it.
    fn record<'a>(
        &'a self,
        card: &'a CardId,
        platform: &'a str,
        posted: &'a PostedCard,
    ) -> BoxFuture<'a, Result<()>>;

    /// Takes the card's next update version; fails if the card was never recorded.
    fn next_version<'a>(
        &'a self,
        card: &'a CardId,
        platform: &'a str,
    ) -> BoxFuture<'a, Result<i64>>;
}

impl CardStore for Store {
    fn get<'a>(
        &'a self,
        card: &'a CardId,
        platform: &'a str,
    ) -> BoxFuture<'a, Result<Option<StoredCard>>> {
        Box::pin(async move {
            let found = self
                .cards()
                .get(&card.tenant, &card.session, &card.card_key, platform)
                .await?;
            Ok(found.map(|m| StoredCard {
                posted: PostedCard {
                    chat_id: m.chat_id,
                    message_id: m.platform_message_id,
                },
                version: m.version,
            }))
        })
    }

    fn record<'a>(
        &'a self,
        card: &'a CardId,
        platform: &'a str,
        posted: &'a PostedCard,
    ) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            let message = CardMessage {
                session_id: card.session.clone(),
                card_key: card.card_key.clone(),
                platform: platform.to_owned(),
                chat_id: posted.chat_id.clone(),
                platform_message_id: posted.message_id.clone(),
                version: 0,
                // The store stamps its own clock.
                updated_at_ms: 0,
            };
            Ok(self.cards().record(&card.tenant, &message).await?)
        })
    }

    fn next_version<'a>(
        &'a self,
        card: &'a CardId,
        platform: &'a str,
    ) -> BoxFuture<'a, Result<i64>> {
        Box::pin(async move {
            Ok(self
                .cards()
                .next_version(&card.tenant, &card.session, &card.card_key, platform)
                .await?)
        })
    }
}

/// A [`CardStore`] in process memory: for tests, and for tools that need no restart safety.
#[derive(Debug, Default)]
pub struct MemoryCardStore {
    cards: Mutex<HashMap<(CardId, String), StoredCard>>,
}

impl MemoryCardStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn with<T>(&self, f: impl FnOnce(&mut HashMap<(CardId, String), StoredCard>) -> T) -> T {
        // A panic elsewhere cannot leave the map half-written: every change is one insert.
        let mut cards = self.cards.lock().unwrap_or_else(PoisonError::into_inner);
        f(&mut cards)
    }
}

impl CardStore for MemoryCardStore {
    fn get<'a>(
        &'a self,
        card: &'a CardId,
        platform: &'a str,
    ) -> BoxFuture<'a, Result<Option<StoredCard>>> {
        let found = self.with(|cards| cards.get(&(card.clone(), platform.to_owned())).cloned());
        Box::pin(async move { Ok(found) })
    }

    fn record<'a>(
        &'a self,
        card: &'a CardId,
        platform: &'a str,
        posted: &'a PostedCard,
    ) -> BoxFuture<'a, Result<()>> {
        self.with(|cards| {
            cards
                .entry((card.clone(), platform.to_owned()))
                .and_modify(|c| c.posted = posted.clone())
                .or_insert_with(|| StoredCard {
                    posted: posted.clone(),
                    version: 0,
                });
        });
        Box::pin(async { Ok(()) })
    }

    fn next_version<'a>(
        &'a self,
        card: &'a CardId,
        platform: &'a str,
    ) -> BoxFuture<'a, Result<i64>> {
        let next = self.with(|cards| {
            cards
                .get_mut(&(card.clone(), platform.to_owned()))
                .map(|c| {
                    c.version += 1;
                    c.version
                })
        });
        Box::pin(async move {
            next.ok_or_else(|| {
                Error::Store(workmate_store::Error::NotFound {
                    what: format!("card {card} on {platform}"),
                })
            })
        })
    }
}
