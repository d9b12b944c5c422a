//! Where posted cards are remembered: the persistence side of the coalescer.
//!
//! Invariants: a card recorded here is updated, never posted again, by any process that later
//! submits the same [`CardId`]; a post is announced ([`CardStore::intend`]) before it is made,
//! so a process that finds a post announced but not recorded knows an earlier one may have made
//! it, and finishes it instead of posting a second message; and `next_version` hands out
//! strictly increasing numbers per card.
//! The trait exists so the coalescer can be tested with paused time against [`MemoryCardStore`]
//! (a SQLite store runs on blocking threads, which paused-time tests cannot drive).

use std::collections::HashMap;
use std::fmt;
use std::sync::{Mutex, PoisonError};

use workmate_protocol::{SessionId, Surface, TenantId};

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

impl CardId {
    /// The card's post key ([`crate::Posting::key`]): 32 hex characters, the same for this card
    /// in every process, and different for every other card.
    pub fn post_key(&self) -> String {
        use sha2::{Digest, Sha256};
        let mut hash = Sha256::new();
        for part in [
            self.tenant.as_str(),
            self.session.as_str(),
            self.card_key.as_str(),
        ] {
            hash.update(part.len().to_le_bytes());
            hash.update(part.as_bytes());
        }
        hex::encode(&hash.finalize()[..16])
    }
}

impl fmt::Display for CardId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.session, self.card_key)
    }
}

/// A card as stored: where it was posted and the last update version used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredCard {
    /// Where it is; while the post is only announced, the id reserved for it (empty where the
    /// platform reserves none).
    pub posted: PostedCard,
    /// The last update version handed out (0 right after posting).
    pub version: i64,
    /// Whether the post is known to have been made; `false` while it is only announced.
    pub confirmed: bool,
}

/// Persistence of posted cards, per platform.
pub trait CardStore: Send + Sync + fmt::Debug {
    /// Where `card` was posted on `platform`, if it was.
    fn get<'a>(
        &'a self,
        card: &'a CardId,
        platform: Surface,
    ) -> BoxFuture<'a, Result<Option<StoredCard>>>;

    /// Announces that `card` is about to be posted (in `reserved.chat_id`, under the id
    /// `reserved.message_id` where the platform reserved one, else an empty id). An announcement
    /// already stored, or a recorded post, is left as it is.
    fn intend<'a>(
        &'a self,
        card: &'a CardId,
        platform: Surface,
        reserved: &'a PostedCard,
    ) -> BoxFuture<'a, Result<()>>;

    /// Records that `card` was posted as `posted` (version 0); recording again moves it.
    fn record<'a>(
        &'a self,
        card: &'a CardId,
        platform: Surface,
        posted: &'a PostedCard,
    ) -> BoxFuture<'a, Result<()>>;

    /// Takes the card's next update version; fails if the card was never recorded.
    fn next_version<'a>(
        &'a self,
        card: &'a CardId,
        platform: Surface,
    ) -> BoxFuture<'a, Result<i64>>;
}

/// A [`CardStore`] in process memory: for tests, and for tools that need no restart safety.
#[derive(Debug, Default)]
pub struct MemoryCardStore {
    cards: Mutex<HashMap<(CardId, Surface), StoredCard>>,
}

impl MemoryCardStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn with<T>(&self, f: impl FnOnce(&mut HashMap<(CardId, Surface), StoredCard>) -> T) -> T {
        // A panic elsewhere cannot leave the map half-written: every change is one insert.
        let mut cards = self.cards.lock().unwrap_or_else(PoisonError::into_inner);
        f(&mut cards)
    }
}

impl CardStore for MemoryCardStore {
    fn get<'a>(
        &'a self,
        card: &'a CardId,
        platform: Surface,
    ) -> BoxFuture<'a, Result<Option<StoredCard>>> {
        let found = self.with(|cards| cards.get(&(card.clone(), platform)).cloned());
        Box::pin(async move { Ok(found) })
    }

    fn intend<'a>(
        &'a self,
        card: &'a CardId,
        platform: Surface,
        reserved: &'a PostedCard,
    ) -> BoxFuture<'a, Result<()>> {
        self.with(|cards| {
            cards
                .entry((card.clone(), platform))
                .or_insert_with(|| StoredCard {
                    posted: reserved.clone(),
                    version: 0,
                    confirmed: false,
                });
        });
        Box::pin(async { Ok(()) })
    }

    fn record<'a>(
        &'a self,
        card: &'a CardId,
        platform: Surface,
        posted: &'a PostedCard,
    ) -> BoxFuture<'a, Result<()>> {
        self.with(|cards| {
            cards
                .entry((card.clone(), platform))
                .and_modify(|c| {
                    c.posted = posted.clone();
                    c.confirmed = true;
                })
                .or_insert_with(|| StoredCard {
                    posted: posted.clone(),
                    version: 0,
                    confirmed: true,
                });
        });
        Box::pin(async { Ok(()) })
    }

    fn next_version<'a>(
        &'a self,
        card: &'a CardId,
        platform: Surface,
    ) -> BoxFuture<'a, Result<i64>> {
        let next = self.with(|cards| {
            cards.get_mut(&(card.clone(), platform)).map(|c| {
                c.version += 1;
                c.version
            })
        });
        Box::pin(async move {
            next.ok_or_else(|| {
                Error::Invalid(format!("card {card} on {platform:?} was never posted"))
            })
        })
    }
}
