//! Posted cards remembered in the SQL store, so any replica updates a card after a restart
//! instead of posting it again.
//!
//! Invariant: a card's post is announced before it is made and its message id recorded once per
//! platform; `next_version` hands out
//! strictly increasing numbers per card, across processes (an atomic increment in the store).

use workmate_adapter::{BoxFuture, CardId, CardStore, Error, PostedCard, StoredCard};
use workmate_protocol::Surface;
use workmate_store::{CardMessage, Store};

/// The store's card table as a [`CardStore`].
#[derive(Clone, Debug)]
pub struct StoreCards(pub Store);

#[allow(
    clippy::needless_pass_by_value,
    reason = "the shape `map_err` hands over"
)]
fn failed(e: workmate_store::Error) -> Error {
    Error::CardStore(e.to_string())
}

impl CardStore for StoreCards {
    fn get<'a>(
        &'a self,
        card: &'a CardId,
        platform: Surface,
    ) -> BoxFuture<'a, workmate_adapter::Result<Option<StoredCard>>> {
        Box::pin(async move {
            let found = self
                .0
                .cards()
                .get(
                    &card.tenant,
                    &card.session,
                    &card.card_key,
                    platform.as_str(),
                )
                .await
                .map_err(failed)?;
            Ok(found.map(|m| StoredCard {
                posted: PostedCard {
                    chat_id: m.chat_id,
                    message_id: m.platform_message_id,
                },
                version: m.version,
                confirmed: m.confirmed,
            }))
        })
    }

    fn intend<'a>(
        &'a self,
        card: &'a CardId,
        platform: Surface,
        reserved: &'a PostedCard,
    ) -> BoxFuture<'a, workmate_adapter::Result<()>> {
        Box::pin(async move {
            self.0
                .cards()
                .intend(&card.tenant, &message(card, platform, reserved, false))
                .await
                .map_err(failed)
        })
    }

    fn record<'a>(
        &'a self,
        card: &'a CardId,
        platform: Surface,
        posted: &'a PostedCard,
    ) -> BoxFuture<'a, workmate_adapter::Result<()>> {
        Box::pin(async move {
            self.0
                .cards()
                .record(&card.tenant, &message(card, platform, posted, true))
                .await
                .map_err(failed)
        })
    }

    fn next_version<'a>(
        &'a self,
        card: &'a CardId,
        platform: Surface,
    ) -> BoxFuture<'a, workmate_adapter::Result<i64>> {
        Box::pin(async move {
            self.0
                .cards()
                .next_version(
                    &card.tenant,
                    &card.session,
                    &card.card_key,
                    platform.as_str(),
                )
                .await
                .map_err(failed)
        })
    }
}

/// The row of `card` posted (or about to be) as `posted`.
fn message(card: &CardId, platform: Surface, posted: &PostedCard, confirmed: bool) -> CardMessage {
    CardMessage {
        session_id: card.session.clone(),
        card_key: card.card_key.clone(),
        platform: platform.as_str().to_owned(),
        chat_id: posted.chat_id.clone(),
        platform_message_id: posted.message_id.clone(),
        version: 0,
        // The store stamps its own clock.
        updated_at_ms: 0,
        confirmed,
    }
}
