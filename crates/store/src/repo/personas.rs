//! Installed personas and the persona each channel starts new sessions with.
//!
//! The store keeps a persona's manifest as written and the capabilities it asks for; reading the
//! manifest is the personas crate's job. Built-in personas are not stored.

use serde::{Deserialize, Serialize};
use sqlx::any::AnyRow;
use workmate_protocol::{Surface, TenantId, UserId};

use crate::repo::skills::{self, SkillRecord, SkillScope};
use crate::row::{col, enum_col, json_col, to_json, to_word};
use crate::{Dialect, Result, Store};

/// Whether an installed persona can be used.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PersonaState {
    /// Installed, waiting for an admin to consent to what it asks for.
    Pending,
    /// Consented to: anyone in the tenant can use it.
    Enabled,
    /// Turned off by an admin; sessions already using it keep it.
    Disabled,
}

/// A persona as installed.
#[derive(Clone, Debug, PartialEq)]
pub struct PersonaRecord {
    /// Its id (`release-manager`).
    pub id: String,
    /// The manifest as written (markdown with front matter).
    pub manifest: String,
    /// Where it came from (a folder or a git URL).
    pub source: String,
    /// Whether it can be used.
    pub state: PersonaState,
    /// What it asks for, one word each (`tool:shell`, `connector:github`, `model:gpt-x`).
    pub capabilities: Vec<String>,
    /// Who installed it.
    pub installed_by: UserId,
    /// When it was (last) installed.
    pub installed_at_ms: i64,
    /// Who consented to its capabilities (or turned it off), if anyone has.
    pub consented_by: Option<UserId>,
    /// When that was.
    pub consented_at_ms: Option<i64>,
}

/// A persona being installed.
#[derive(Clone, Debug)]
pub struct NewPersona {
    /// Its id.
    pub id: String,
    /// The manifest as written.
    pub manifest: String,
    /// Where it came from.
    pub source: String,
    /// The state it lands in.
    pub state: PersonaState,
    /// What it asks for.
    pub capabilities: Vec<String>,
    /// Who installs it.
    pub installed_by: UserId,
}

/// Installed personas and channel defaults.
#[derive(Debug)]
pub struct PersonaRepo<'s> {
    store: &'s Store,
}

macro_rules! select {
    ($rest:literal) => {
        concat!(
            "SELECT persona_id, manifest, source, state, capabilities, installed_by, \
             installed_at_ms, consented_by, consented_at_ms FROM personas WHERE tenant_id = ?",
            $rest
        )
    };
}

macro_rules! install_sql {
    () => {
        "INSERT INTO personas (tenant_id, persona_id, manifest, source, state, capabilities, installed_by, installed_at_ms, consented_by, consented_at_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL)"
    };
}

macro_rules! channel_sql {
    () => {
        "INSERT INTO channel_personas (tenant_id, surface, chat_id, persona_id, set_by, set_at_ms) VALUES (?, ?, ?, ?, ?, ?)"
    };
}

impl<'s> PersonaRepo<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// Installs a persona with the skills its bundle ships (replacing the ones it shipped
    /// before), in one transaction; or replaces the installed one of the same id. A replacement
    /// keeps the consent record only when it lands in the state it had (its capabilities did not
    /// grow); the caller decides the state.
    pub async fn install(
        &self,
        tenant: &TenantId,
        new: &NewPersona,
        bundle: &[SkillRecord],
    ) -> Result<PersonaRecord> {
        let now = self.store.clock_ms();
        let sql = match self.store.dialect {
            Dialect::Sqlite | Dialect::Postgres => concat!(
                install_sql!(),
                " ON CONFLICT (tenant_id, persona_id) DO UPDATE SET manifest = excluded.manifest, source = excluded.source, capabilities = excluded.capabilities, installed_by = excluded.installed_by, installed_at_ms = excluded.installed_at_ms, consented_by = CASE WHEN personas.state = excluded.state THEN personas.consented_by ELSE NULL END, consented_at_ms = CASE WHEN personas.state = excluded.state THEN personas.consented_at_ms ELSE NULL END, state = excluded.state"
            ),
            // MySQL evaluates assignments left to right, so `state` is set last.
            Dialect::Mysql => concat!(
                install_sql!(),
                " ON DUPLICATE KEY UPDATE manifest = VALUES(manifest), source = VALUES(source), capabilities = VALUES(capabilities), installed_by = VALUES(installed_by), installed_at_ms = VALUES(installed_at_ms), consented_by = IF(state = VALUES(state), consented_by, NULL), consented_at_ms = IF(state = VALUES(state), consented_at_ms, NULL), state = VALUES(state)"
            ),
        };
        let mut tx = self.store.begin_write().await?;
        skills::clear_in(&mut tx, self.store, tenant, SkillScope::Persona, &new.id).await?;
        for skill in bundle {
            let skill = SkillRecord {
                scope: SkillScope::Persona,
                scope_key: new.id.clone(),
                ..skill.clone()
            };
            skills::put_in(&mut tx, self.store, tenant, &skill).await?;
        }
        self.store
            .dialect
            .query(sql)
            .bind(tenant.as_str().to_owned())
            .bind(new.id.clone())
            .bind(new.manifest.clone())
            .bind(new.source.clone())
            .bind(to_word(&new.state)?)
            .bind(to_json(&new.capabilities)?)
            .bind(new.installed_by.as_str().to_owned())
            .bind(now)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        self.store.catalog.forget();
        self.read(tenant, &new.id).await?.ok_or_else(|| {
            crate::Error::corrupt("personas", format!("{} vanished after install", new.id))
        })
    }

    /// One installed persona (cached: a change through this process is seen at once, one
    /// through another within seconds).
    pub async fn get(&self, tenant: &TenantId, id: &str) -> Result<Option<PersonaRecord>> {
        if let Some(cached) = self.store.catalog.persona(tenant, id) {
            return Ok(cached);
        }
        let mark = self.store.catalog.mark();
        let found = self.read(tenant, id).await?;
        self.store
            .catalog
            .put_persona(tenant, id, found.clone(), mark);
        Ok(found)
    }

    async fn read(&self, tenant: &TenantId, id: &str) -> Result<Option<PersonaRecord>> {
        let row = self
            .store
            .dialect
            .query(select!(" AND persona_id = ?"))
            .bind(tenant.as_str().to_owned())
            .bind(id.to_owned())
            .fetch_optional(&self.store.pool)
            .await?;
        row.map(|r| from_row(&r)).transpose()
    }

    /// Every installed persona, by id.
    pub async fn list(&self, tenant: &TenantId) -> Result<Vec<PersonaRecord>> {
        let rows = self
            .store
            .dialect
            .query(select!(" ORDER BY persona_id"))
            .bind(tenant.as_str().to_owned())
            .fetch_all(&self.store.pool)
            .await?;
        rows.iter().map(from_row).collect()
    }

    /// Enables or disables an installed persona, recording who did. False when it is not
    /// installed.
    pub async fn set_state(
        &self,
        tenant: &TenantId,
        id: &str,
        state: PersonaState,
        by: &UserId,
    ) -> Result<bool> {
        let done = self
            .store
            .dialect
            .query("UPDATE personas SET state = ?, consented_by = ?, consented_at_ms = ? WHERE tenant_id = ? AND persona_id = ?")
            .bind(to_word(&state)?)
            .bind(by.as_str().to_owned())
            .bind(self.store.clock_ms())
            .bind(tenant.as_str().to_owned())
            .bind(id.to_owned())
            .execute(&self.store.writes)
            .await?;
        self.store.catalog.forget();
        Ok(done.rows_affected() > 0)
    }

    /// Sets the persona new sessions in a channel start with.
    pub async fn set_channel_default(
        &self,
        tenant: &TenantId,
        surface: Surface,
        chat_id: &str,
        persona: &str,
        by: &UserId,
    ) -> Result<()> {
        let sql = match self.store.dialect {
            Dialect::Sqlite | Dialect::Postgres => concat!(
                channel_sql!(),
                " ON CONFLICT (tenant_id, surface, chat_id) DO UPDATE SET persona_id = excluded.persona_id, set_by = excluded.set_by, set_at_ms = excluded.set_at_ms"
            ),
            Dialect::Mysql => concat!(
                channel_sql!(),
                " ON DUPLICATE KEY UPDATE persona_id = VALUES(persona_id), set_by = VALUES(set_by), set_at_ms = VALUES(set_at_ms)"
            ),
        };
        self.store
            .dialect
            .query(sql)
            .bind(tenant.as_str().to_owned())
            .bind(to_word(&surface)?)
            .bind(chat_id.to_owned())
            .bind(persona.to_owned())
            .bind(by.as_str().to_owned())
            .bind(self.store.clock_ms())
            .execute(&self.store.writes)
            .await?;
        Ok(())
    }

    /// The persona new sessions in a channel start with, if an admin chose one.
    pub async fn channel_default(
        &self,
        tenant: &TenantId,
        surface: Surface,
        chat_id: &str,
    ) -> Result<Option<String>> {
        let row = self
            .store
            .dialect
            .query("SELECT persona_id FROM channel_personas WHERE tenant_id = ? AND surface = ? AND chat_id = ?")
            .bind(tenant.as_str().to_owned())
            .bind(to_word(&surface)?)
            .bind(chat_id.to_owned())
            .fetch_optional(&self.store.pool)
            .await?;
        row.map(|r| col(&r, "channel_personas", "persona_id"))
            .transpose()
    }
}

fn from_row(row: &AnyRow) -> Result<PersonaRecord> {
    const T: &str = "personas";
    Ok(PersonaRecord {
        id: col(row, T, "persona_id")?,
        manifest: col(row, T, "manifest")?,
        source: col(row, T, "source")?,
        state: enum_col(row, T, "state")?,
        capabilities: json_col(row, T, "capabilities")?,
        installed_by: UserId::from(col::<String>(row, T, "installed_by")?),
        installed_at_ms: col(row, T, "installed_at_ms")?,
        consented_by: col::<Option<String>>(row, T, "consented_by")?.map(UserId::from),
        consented_at_ms: col(row, T, "consented_at_ms")?,
    })
}
