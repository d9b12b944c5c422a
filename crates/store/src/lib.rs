//! workmate's SQL store.
//!
//! One code path serves an embedded SQLite file and the clustered databases (MySQL/MariaDB/TiDB,
//! Postgres) through sqlx's `Any` driver. Invariants every repository keeps:
//! - every statement names the tenant: a caller holding tenant A's id can never read or change
//!   tenant B's rows;
//! - a write that spans rows happens in one transaction, so no half-written state is visible;
//! - per-session counters (event `seq`, message index) are allocated by an atomic increment of the
//!   session row inside the writing transaction, so concurrent appenders never collide or skip.

mod catalog_cache;
mod clock;
mod connect;
mod copy;
mod dialect;
mod error;
mod identity_cache;
mod migrate;
mod repo;
mod row;
mod tenant_cache;
mod vault;
mod visibility;
mod writer;

pub use clock::{Clock, SystemClock};
pub use connect::{ConnectOptions, sqlite_file, validate_url};
pub use dialect::Dialect;
pub use error::{Error, Result};
pub use migrate::{MigrationReport, migration_names};
pub use repo::approvers::ApproverRepo;
pub use repo::audit::{AuditQuery, AuditRecord, AuditRepo, NewAuditRecord};
pub use repo::audit_chain::{ChainBreak, ChainReport, GENESIS};
pub use repo::audit_outbox::SinkBacklog;
pub use repo::automations::{
    Automation, AutomationRepo, AutomationRun, Claim, NewAutomation, RunEnd, RunStatus, RunTrigger,
};
pub use repo::bindings::{BOUND_STAGE, BindingRepo, DirectoryFacts};
pub use repo::cards::{CardMessage, CardRepo};
pub use repo::connection_leases::{ConnectionLease, ConnectionLeaseRepo};
pub use repo::events::EventRepo;
pub use repo::inbox::{
    Answer, CountedApproval, InboxFilter, InboxItem, InboxItemState, InboxRepo, NewInboxItem,
    ResolveOutcome, agreed,
};
pub use repo::intake::{
    API_COMMANDS, Delivery, IntakeKey, IntakeRepo, IntakeState, NewDelivery, Queue,
};
pub use repo::leases::LeaseRepo;
pub use repo::mcp_servers::{McpServerRecord, McpServerRepo};
pub use repo::memories::{Memory, MemoryRepo, MemoryScope, NewMemory};
pub use repo::message_sessions::MessageSessionRepo;
pub use repo::messages::MessageRepo;
pub use repo::offboarding::{
    AUDIT_STAGE as DEPROVISIONED_STAGE, OFFBOARDED, Offboarded, OffboardingRepo,
};
pub use repo::open_turns::{OpenTurn, OpenTurnRepo};
pub use repo::personas::{NewPersona, PersonaRecord, PersonaRepo, PersonaState};
pub use repo::roles::RoleChange;
pub use repo::secrets::SecretRepo;
pub use repo::sessions::{NewSession, SessionKey, SessionRecord, SessionRepo};
pub use repo::shared_values::SharedValueRepo;
pub use repo::skills::{SkillRecord, SkillRepo, SkillScope};
pub use repo::spent_links::SpentLinkRepo;
pub use repo::tenants::{NewUser, Role, Tenant, TenantRepo, User};
pub use repo::tool_calls::{ToolCallRecord, ToolCallRepo, ToolCallState, Transition};
pub use repo::usage::{NewUsage, UsageGroup, UsageRepo, UsageTotal, utc_day};
pub use repo::wakes::{NewWake, Wake, WakeKind, WakeRepo, WakeState};
pub use vault::{KeyUse, MAX_SECRET_BYTES, RotationReport, Vault, VaultStatus};
pub use visibility::{Sight, can_see};
pub use writer::{
    Counters, LedgerMove, SessionChange, StepDone, StepError, StepWrite, StepWritten, Writer,
};

use std::sync::{Arc, OnceLock};

use sqlx::AnyPool;

/// A handle on the database: cheap to clone, shared by every task of the process.
#[derive(Clone, Debug)]
pub struct Store {
    pool: AnyPool,
    /// Where the hot write paths take their connection: on a SQLite file, a pool of one, so
    /// writers queue here instead of sleeping on the database's lock; elsewhere `pool` itself.
    writes: AnyPool,
    dialect: Dialect,
    clock: Arc<dyn Clock>,
    /// Started on first use, on the runtime of its first caller.
    writer: Arc<OnceLock<Writer>>,
    /// Tenant rows, read on every turn.
    tenants: tenant_cache::TenantCache,
    /// Users by platform identity, read on every chat delivery.
    identities: identity_cache::IdentityCache,
    /// Installed personas and visible skills, read on every turn.
    catalog: catalog_cache::CatalogCache,
}

impl Store {
    /// Which database this store talks to.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// Checks that the database answers a trivial query.
    pub async fn ping(&self) -> Result<()> {
        sqlx::query("SELECT 1").execute(&self.pool).await?;
        Ok(())
    }

    /// Closes every pooled connection; later calls fail.
    pub async fn close(&self) {
        self.writes.close().await;
        self.pool.close().await;
    }

    /// Connections open right now, and how many of them are idle.
    pub fn pool_stats(&self) -> (u32, usize) {
        (self.pool.size(), self.pool.num_idle())
    }

    /// How many entries the in-memory caches hold (moka's count, which may lag by a few): tenant
    /// rows and chat identities, by cache name.
    pub fn cached_items(&self) -> [(&'static str, u64); 2] {
        [
            ("tenants", self.tenants.len()),
            ("identities", self.identities.len()),
        ]
    }

    /// Tenants, their users and the platform identities bound to them.
    pub fn tenants(&self) -> TenantRepo<'_> {
        TenantRepo::new(self)
    }

    /// Sessions (conversations).
    pub fn sessions(&self) -> SessionRepo<'_> {
        SessionRepo::new(self)
    }

    /// Persisted state events, with their per-session sequence numbers.
    pub fn events(&self) -> EventRepo<'_> {
        EventRepo::new(self)
    }

    /// Append-only conversation history.
    pub fn messages(&self) -> MessageRepo<'_> {
        MessageRepo::new(self)
    }

    /// The tool-call execution ledger.
    pub fn tool_calls(&self) -> ToolCallRepo<'_> {
        ToolCallRepo::new(self)
    }

    /// Parked prompts.
    pub fn inbox(&self) -> InboxRepo<'_> {
        InboxRepo::new(self)
    }

    /// Scheduled automations and their runs.
    pub fn automations(&self) -> AutomationRepo<'_> {
        AutomationRepo::new(self)
    }

    /// Self-wakes.
    pub fn wakes(&self) -> WakeRepo<'_> {
        WakeRepo::new(self)
    }

    /// Session writer leases.
    pub fn leases(&self) -> LeaseRepo<'_> {
        LeaseRepo::new(self)
    }

    /// Chat accounts bound to directory subjects.
    pub fn bindings(&self) -> BindingRepo<'_> {
        BindingRepo::new(self)
    }

    /// Deactivating users and revoking what they hold.
    pub fn offboarding(&self) -> OffboardingRepo<'_> {
        OffboardingRepo::new(self)
    }

    /// Leases on platform connections that one process holds at a time.
    pub fn connection_leases(&self) -> ConnectionLeaseRepo<'_> {
        ConnectionLeaseRepo::new(self)
    }

    /// Turns sessions are in the middle of (recovery after a crash).
    pub fn open_turns(&self) -> OpenTurnRepo<'_> {
        OpenTurnRepo::new(self)
    }

    /// Registered MCP servers.
    pub fn mcp_servers(&self) -> McpServerRepo<'_> {
        McpServerRepo::new(self)
    }

    /// The approvers a platform can reach, and their notice preference.
    pub fn approvers(&self) -> ApproverRepo<'_> {
        ApproverRepo::new(self)
    }

    /// Which conversation each chat message went to (for recalls).
    pub fn message_sessions(&self) -> MessageSessionRepo<'_> {
        MessageSessionRepo::new(self)
    }

    /// Links that work once.
    pub fn spent_links(&self) -> SpentLinkRepo<'_> {
        SpentLinkRepo::new(self)
    }

    /// Installed personas and channel defaults.
    pub fn personas(&self) -> PersonaRepo<'_> {
        PersonaRepo::new(self)
    }

    /// Skills.
    pub fn skills(&self) -> SkillRepo<'_> {
        SkillRepo::new(self)
    }

    /// Explicit memories.
    pub fn memories(&self) -> MemoryRepo<'_> {
        MemoryRepo::new(self)
    }

    /// Audit records.
    pub fn audit(&self) -> AuditRepo<'_> {
        AuditRepo::new(self)
    }

    /// Sealed secrets (the credential vault's rows; use [`Vault`] to seal and open them).
    pub fn secrets(&self) -> SecretRepo<'_> {
        SecretRepo::new(self)
    }

    /// Platform message ids of rendered cards.
    pub fn cards(&self) -> CardRepo<'_> {
        CardRepo::new(self)
    }

    /// Inbound chat deliveries, stored before they are acknowledged.
    pub fn intake(&self) -> IntakeRepo<'_> {
        IntakeRepo::new(self)
    }

    /// Short-lived values every replica reads (when replicas share only the database).
    pub fn shared_values(&self) -> SharedValueRepo<'_> {
        SharedValueRepo::new(self)
    }

    /// Token usage per model call.
    pub fn usage(&self) -> UsageRepo<'_> {
        UsageRepo::new(self)
    }

    /// The group-commit writer that stores turn steps (see [`StepWrite`]).
    pub fn writer(&self) -> &Writer {
        self.writer.get_or_init(|| {
            // The task's own handle has no writer, so the queue closes when the last handle
            // outside it is dropped.
            let own = Self {
                writer: Arc::default(),
                ..self.clone()
            };
            Writer::spawn(&own)
        })
    }

    /// Now, by the store's clock (the one tests can move).
    pub fn clock_ms(&self) -> i64 {
        self.clock.now_ms()
    }
}

impl Store {
    /// Starts a transaction that will write, on the write connections. On SQLite it takes the
    /// write lock up front (`BEGIN IMMEDIATE`), so a writer outside them queues on the busy
    /// timeout instead of failing when it upgrades from reading to writing.
    pub(crate) async fn begin_write(&self) -> Result<sqlx::Transaction<'static, sqlx::Any>> {
        Ok(match self.dialect {
            Dialect::Sqlite => self.writes.begin_with("BEGIN IMMEDIATE").await?,
            Dialect::Mysql | Dialect::Postgres => self.writes.begin().await?,
        })
    }
}

#[cfg(feature = "test-support")]
pub mod test_support;
