//! Skills: procedures taught once, kept per tenant, per channel or per persona bundle.

use serde::{Deserialize, Serialize};
use sqlx::any::AnyRow;
use workmate_protocol::{TenantId, UserId};

use crate::row::{col, enum_col, json_col, to_json, to_word};
use crate::{Dialect, Result, Store};

/// Where a skill is kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SkillScope {
    /// For everyone in the tenant (key `""`).
    Tenant,
    /// Shipped in a persona's bundle (key: the persona id).
    Persona,
    /// For one channel (key: `<surface>:<chat id>`).
    Channel,
}

/// A stored skill.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkillRecord {
    /// Where it is kept.
    pub scope: SkillScope,
    /// Which tenant-wide, persona or channel store holds it.
    pub scope_key: String,
    /// Its name (`release-notes`).
    pub name: String,
    /// One line on when it applies: all the model sees until it loads the skill.
    pub description: String,
    /// The procedure itself.
    pub instructions: String,
    /// Tools the procedure expects to use (advisory).
    pub allowed_tools: Vec<String>,
    /// Who saved it (none for skills shipped in a bundle).
    pub created_by: Option<UserId>,
    /// When it last changed.
    pub updated_at_ms: i64,
}

/// Skills.
#[derive(Debug)]
pub struct SkillRepo<'s> {
    store: &'s Store,
}

macro_rules! put_sql {
    () => {
        "INSERT INTO skills (tenant_id, scope, scope_key, name, description, instructions, allowed_tools, created_by, updated_at_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
    };
}

impl<'s> SkillRepo<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// Saves a skill, replacing the one of the same name in the same store.
    pub async fn put(&self, tenant: &TenantId, skill: &SkillRecord) -> Result<()> {
        let mut tx = self.store.begin_write().await?;
        put_in(&mut tx, self.store, tenant, skill).await?;
        tx.commit().await?;
        self.store.catalog.forget();
        Ok(())
    }

    /// The skills of the tenant's store, one persona's bundle and one channel's store, ordered
    /// by scope (tenant, persona, channel) and then name: one query, cached (a change through
    /// this process is seen at once, one through another within seconds).
    pub async fn visible(
        &self,
        tenant: &TenantId,
        persona: &str,
        channel: &str,
    ) -> Result<Vec<SkillRecord>> {
        let key = (tenant.clone(), persona.to_owned(), channel.to_owned());
        if let Some(cached) = self.store.catalog.skills(&key) {
            return Ok(cached.as_ref().clone());
        }
        let mark = self.store.catalog.mark();
        let skills = self.read_visible(tenant, persona, channel).await?;
        self.store
            .catalog
            .put_skills(key, std::sync::Arc::new(skills.clone()), mark);
        Ok(skills)
    }

    async fn read_visible(
        &self,
        tenant: &TenantId,
        persona: &str,
        channel: &str,
    ) -> Result<Vec<SkillRecord>> {
        let rows = self
            .store
            .dialect
            .query("SELECT scope, scope_key, name, description, instructions, allowed_tools, created_by, updated_at_ms FROM skills WHERE tenant_id = ? AND ((scope = 'tenant' AND scope_key = '') OR (scope = 'persona' AND scope_key = ?) OR (scope = 'channel' AND scope_key = ?))")
            .bind(tenant.as_str().to_owned())
            .bind(persona.to_owned())
            .bind(channel.to_owned())
            .fetch_all(&self.store.pool)
            .await?;
        let mut skills = rows.iter().map(from_row).collect::<Result<Vec<_>>>()?;
        skills.sort_by(|a, b| (a.scope, &a.name).cmp(&(b.scope, &b.name)));
        Ok(skills)
    }
}

/// Saves a skill inside `tx`.
pub(crate) async fn put_in(
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    store: &Store,
    tenant: &TenantId,
    skill: &SkillRecord,
) -> Result<()> {
    let sql = match store.dialect {
        Dialect::Sqlite | Dialect::Postgres => concat!(
            put_sql!(),
            " ON CONFLICT (tenant_id, scope, scope_key, name) DO UPDATE SET description = excluded.description, instructions = excluded.instructions, allowed_tools = excluded.allowed_tools, created_by = excluded.created_by, updated_at_ms = excluded.updated_at_ms"
        ),
        Dialect::Mysql => concat!(
            put_sql!(),
            " ON DUPLICATE KEY UPDATE description = VALUES(description), instructions = VALUES(instructions), allowed_tools = VALUES(allowed_tools), created_by = VALUES(created_by), updated_at_ms = VALUES(updated_at_ms)"
        ),
    };
    store
        .dialect
        .query(sql)
        .bind(tenant.as_str().to_owned())
        .bind(to_word(&skill.scope)?)
        .bind(skill.scope_key.clone())
        .bind(skill.name.clone())
        .bind(skill.description.clone())
        .bind(skill.instructions.clone())
        .bind(to_json(&skill.allowed_tools)?)
        .bind(skill.created_by.as_ref().map(|u| u.as_str().to_owned()))
        .bind(store.clock_ms())
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Removes every skill of one store inside `tx`.
pub(crate) async fn clear_in(
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    store: &Store,
    tenant: &TenantId,
    scope: SkillScope,
    key: &str,
) -> Result<()> {
    store
        .dialect
        .query("DELETE FROM skills WHERE tenant_id = ? AND scope = ? AND scope_key = ?")
        .bind(tenant.as_str().to_owned())
        .bind(to_word(&scope)?)
        .bind(key.to_owned())
        .execute(&mut **tx)
        .await?;
    Ok(())
}

fn from_row(row: &AnyRow) -> Result<SkillRecord> {
    const T: &str = "skills";
    Ok(SkillRecord {
        scope: enum_col(row, T, "scope")?,
        scope_key: col(row, T, "scope_key")?,
        name: col(row, T, "name")?,
        description: col(row, T, "description")?,
        instructions: col(row, T, "instructions")?,
        allowed_tools: json_col(row, T, "allowed_tools")?,
        created_by: col::<Option<String>>(row, T, "created_by")?.map(UserId::from),
        updated_at_ms: col(row, T, "updated_at_ms")?,
    })
}
