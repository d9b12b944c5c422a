//! Platform message ids of rendered cards, so any replica can update a card after a restart.
//!
//! Invariant: `next_version` hands out strictly increasing numbers per card, across replicas
//! (platforms such as Feishu reject an update whose sequence is not larger than the last).

use sqlx::any::AnyRow;
use workmate_protocol::{SessionId, TenantId};

use crate::row::col;
use crate::{Dialect, Error, Result, Store};

/// Where a card was posted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CardMessage {
    /// The session the card belongs to.
    pub session_id: SessionId,
    /// Which card of the session (e.g. `turn:<turn id>`, `inbox:<item id>`).
    pub card_key: String,
    /// The platform it was posted on.
    pub platform: String,
    /// The chat it was posted in.
    pub chat_id: String,
    /// The platform's id of the posted message.
    pub platform_message_id: String,
    /// The last update sequence used.
    pub version: i64,
    /// When it was last updated.
    pub updated_at_ms: i64,
    /// Whether the post was made; `false` while it is only announced
    /// ([`CardRepo::intend`]), when `platform_message_id` is the id reserved for it, if any.
    pub confirmed: bool,
}

/// The insert of a posted card; [`CardRepo::record`] adds the backend's upsert clause.
macro_rules! record_sql {
    () => {
        "INSERT INTO card_messages (tenant_id, session_id, card_key, platform, chat_id, platform_message_id, version, updated_at_ms, confirmed) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
    };
}

/// The version bump of [`CardRepo::next_version`].
macro_rules! bump_sql {
    () => {
        "UPDATE card_messages SET version = version + 1, updated_at_ms = ? WHERE tenant_id = ? AND session_id = ? AND card_key = ? AND platform = ?"
    };
}

/// Card message ids.
#[derive(Debug)]
pub struct CardRepo<'s> {
    store: &'s Store,
}

impl<'s> CardRepo<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// Records where a card was posted (confirmed); recording it again replaces chat and message
    /// id and keeps the version. One upsert statement.
    pub async fn record(&self, tenant: &TenantId, card: &CardMessage) -> Result<()> {
        let sql = match self.store.dialect {
            Dialect::Sqlite | Dialect::Postgres => concat!(
                record_sql!(),
                " ON CONFLICT (tenant_id, session_id, card_key, platform) DO UPDATE SET chat_id = excluded.chat_id, platform_message_id = excluded.platform_message_id, updated_at_ms = excluded.updated_at_ms, confirmed = 1"
            ),
            Dialect::Mysql => concat!(
                record_sql!(),
                " ON DUPLICATE KEY UPDATE chat_id = VALUES(chat_id), platform_message_id = VALUES(platform_message_id), updated_at_ms = VALUES(updated_at_ms), confirmed = 1"
            ),
        };
        self.write(sql, tenant, card, true).await
    }

    /// Announces that a card is about to be posted: a row, not confirmed, holding the id the
    /// platform reserved for it (empty where it reserves none). A row already there, announced
    /// or posted, is left as it is.
    pub async fn intend(&self, tenant: &TenantId, card: &CardMessage) -> Result<()> {
        let sql = match self.store.dialect {
            Dialect::Sqlite | Dialect::Postgres => concat!(
                record_sql!(),
                " ON CONFLICT (tenant_id, session_id, card_key, platform) DO NOTHING"
            ),
            // A no-op assignment: the row stays as it is.
            Dialect::Mysql => concat!(record_sql!(), " ON DUPLICATE KEY UPDATE version = version"),
        };
        self.write(sql, tenant, card, false).await
    }

    async fn write(
        &self,
        sql: &'static str,
        tenant: &TenantId,
        card: &CardMessage,
        confirmed: bool,
    ) -> Result<()> {
        self.store
            .dialect
            .query(sql)
            .bind(tenant.as_str().to_owned())
            .bind(card.session_id.as_str().to_owned())
            .bind(card.card_key.clone())
            .bind(card.platform.clone())
            .bind(card.chat_id.clone())
            .bind(card.platform_message_id.clone())
            .bind(card.version)
            .bind(self.store.clock_ms())
            .bind(i64::from(confirmed))
            .execute(&self.store.writes)
            .await?;
        Ok(())
    }

    /// Where a card was posted, if it was.
    pub async fn get(
        &self,
        tenant: &TenantId,
        session: &SessionId,
        card_key: &str,
        platform: &str,
    ) -> Result<Option<CardMessage>> {
        let row = self
            .store
            .dialect
            .query("SELECT session_id, card_key, platform, chat_id, platform_message_id, version, updated_at_ms, confirmed FROM card_messages WHERE tenant_id = ? AND session_id = ? AND card_key = ? AND platform = ?")
            .bind(tenant.as_str().to_owned())
            .bind(session.as_str().to_owned())
            .bind(card_key.to_owned())
            .bind(platform.to_owned())
            .fetch_optional(&self.store.pool)
            .await?;
        row.map(|r| from_row(&r)).transpose()
    }

    /// Takes the card's next update sequence number: one statement where the backend has
    /// `RETURNING`, a transaction of two on MySQL.
    pub async fn next_version(
        &self,
        tenant: &TenantId,
        session: &SessionId,
        card_key: &str,
        platform: &str,
    ) -> Result<i64> {
        let d = self.store.dialect;
        let bump = |template: &'static str| {
            d.query(template)
                .bind(self.store.clock_ms())
                .bind(tenant.as_str().to_owned())
                .bind(session.as_str().to_owned())
                .bind(card_key.to_owned())
                .bind(platform.to_owned())
        };
        let missing = || Error::NotFound {
            what: format!("card {card_key} on {platform}"),
        };
        if d.has_returning() {
            let rows = bump(concat!(bump_sql!(), " RETURNING version"))
                .fetch_all(&self.store.writes)
                .await?;
            let row = rows.first().ok_or_else(missing)?;
            return col(row, "card_messages", "version");
        }
        let mut tx = self.store.begin_write().await?;
        if bump(bump_sql!()).execute(&mut *tx).await?.rows_affected() == 0 {
            return Err(missing());
        }
        let version = col(
            &d.query("SELECT version FROM card_messages WHERE tenant_id = ? AND session_id = ? AND card_key = ? AND platform = ?")
                .bind(tenant.as_str().to_owned())
                .bind(session.as_str().to_owned())
                .bind(card_key.to_owned())
                .bind(platform.to_owned())
                .fetch_one(&mut *tx)
                .await?,
            "card_messages",
            "version",
        )?;
        tx.commit().await?;
        Ok(version)
    }
}

fn from_row(row: &AnyRow) -> Result<CardMessage> {
    const T: &str = "card_messages";
    Ok(CardMessage {
        session_id: SessionId::from(col::<String>(row, T, "session_id")?),
        card_key: col(row, T, "card_key")?,
        platform: col(row, T, "platform")?,
        chat_id: col(row, T, "chat_id")?,
        platform_message_id: col(row, T, "platform_message_id")?,
        version: col(row, T, "version")?,
        updated_at_ms: col(row, T, "updated_at_ms")?,
        confirmed: col::<i64>(row, T, "confirmed")? != 0,
    })
}
