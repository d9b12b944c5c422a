//! The audit trail for operators: the background sealer that chains new records, and
//! `workmate audit export|verify`.
//!
//! Invariants: the sealer runs in every replica (the store's head-row lock keeps them from
//! giving out a place twice) and stops with the server; `export` writes sealed records only, in
//! chain order, one JSON object per line, each with its place and hashes, so a copy can be
//! checked on its own; `verify` reads only and exits 1 when any chain is broken, naming each
//! break; neither prints anything the records do not hold.

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio_util::sync::CancellationToken;
use tracing::{info, warn};
use workmate_protocol::TenantId;
use workmate_store::{AuditRecord, ChainReport, Store};

mod nats;
mod redis;
mod sinks;

pub use nats::NatsSink;
pub use redis::RedisSink;
pub use sinks::{Shipper, Sink, SinkFuture};

use crate::cli::AuditCommand;
use crate::config::Config;
use crate::error::StartupError;
use crate::{data_dir, database};

/// How often new records are sealed.
const SEAL_EVERY: Duration = Duration::from_millis(250);
/// Records sealed per tenant and transaction.
const SEAL_BATCH: u32 = 500;
/// Records read per page while exporting.
const EXPORT_PAGE: u32 = 1_000;

/// Seals new audit records every [`SEAL_EVERY`] until `stop`, and once more on the way out.
pub(crate) fn seal_continuously(store: Store, stop: CancellationToken) {
    tokio::spawn(async move {
        loop {
            let stopping = tokio::select! {
                () = stop.cancelled() => true,
                () = tokio::time::sleep(SEAL_EVERY) => false,
            };
            loop {
                match store.audit().seal(SEAL_BATCH).await {
                    Ok(n) if n >= u64::from(SEAL_BATCH) => {}
                    Ok(_) => break,
                    Err(e) => {
                        warn!(error = %e, "Sealing audit records failed; trying again shortly.");
                        break;
                    }
                }
            }
            if stopping {
                return;
            }
        }
    });
}

/// Starts a shipper for every configured sink; a sink that cannot be set up stops the start.
pub(crate) fn ship_to_sinks(
    config: &Config,
    store: &Store,
    stop: &CancellationToken,
) -> Result<(), StartupError> {
    let mut configured: Vec<Arc<dyn sinks::Sink>> = Vec::new();
    if let Some(redis) = &config.audit.redis {
        configured.push(Arc::new(
            redis::RedisSink::new(redis).map_err(StartupError::Usage)?,
        ));
    }
    if let Some(nats) = &config.audit.nats {
        configured.push(Arc::new(nats::NatsSink::new(nats)));
    }
    for sink in configured {
        info!(sink = sink.name(), "Streaming the audit trail.");
        sinks::Shipper::new(store.clone(), sink).run(stop.clone());
    }
    Ok(())
}

/// Runs `workmate audit …` against the configured database.
pub(crate) async fn run(config: &Config, action: &AuditCommand) -> Result<String, StartupError> {
    data_dir::prepare(&config.server.data_dir)?;
    let store = database::open(config).await?;
    database::migrate(&store, config).await?;
    let outcome = match action {
        AuditCommand::Export { tenant, from, to } => {
            let from = from.as_deref().map(parse_time).transpose()?;
            let to = to.as_deref().map(parse_time).transpose()?;
            export(&store, &TenantId::from(tenant.as_str()), from, to).await
        }
        AuditCommand::Verify { tenant } => verify(&store, tenant.as_deref()).await,
    };
    store.close().await;
    outcome
}

/// A time as Unix milliseconds: RFC 3339 (`2026-12-01T09:00:00Z`) or a UTC date (`2026-12-01`).
fn parse_time(text: &str) -> Result<i64, StartupError> {
    if let Ok(at) = chrono::DateTime::parse_from_rfc3339(text) {
        return Ok(at.timestamp_millis());
    }
    if let Ok(day) = chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d")
        && let Some(midnight) = day.and_hms_opt(0, 0, 0)
    {
        return Ok(midnight.and_utc().timestamp_millis());
    }
    Err(StartupError::Usage(format!(
        "`{text}` is not a time; write 2026-12-01 or 2026-12-01T09:00:00Z"
    )))
}

/// One record as an export line.
pub fn record_json(tenant: &TenantId, record: &AuditRecord) -> serde_json::Value {
    json!({
        "tenant": tenant.as_str(),
        "seq": record.seq,
        "id": record.id,
        "at_ms": record.at_ms,
        "session_id": record.session_id,
        "actor": record.actor,
        "stage": record.stage,
        "tool": record.tool,
        "status": record.status,
        "detail": record.detail,
        "prev_hash": record.prev_hash,
        "hash": record.hash,
    })
}

async fn export(
    store: &Store,
    tenant: &TenantId,
    from: Option<i64>,
    to: Option<i64>,
) -> Result<String, StartupError> {
    let (from, to) = (from.unwrap_or(0), to.unwrap_or(i64::MAX));
    let mut out = std::io::stdout().lock();
    let (mut after, mut written) = (0_i64, 0_u64);
    loop {
        let page = store
            .audit()
            .sealed_after(tenant, after, from, to, EXPORT_PAGE)
            .await
            .map_err(StartupError::Store)?;
        for record in &page {
            let line = record_json(tenant, record);
            writeln!(out, "{line}").map_err(|e| StartupError::Refused(format!("stdout: {e}")))?;
            after = record.seq.unwrap_or(after);
            written += 1;
        }
        if page.len() < EXPORT_PAGE as usize {
            break;
        }
    }
    out.flush()
        .map_err(|e| StartupError::Refused(format!("stdout: {e}")))?;
    // The count goes to the log (stderr), so stdout stays pure JSON lines.
    info!(tenant = %tenant, records = written, "Exported sealed audit records.");
    Ok(String::new())
}

/// Verifies every tenant's audit chain: the report, or [`StartupError::AuditBroken`].
pub(crate) async fn verify_all(store: &Store) -> Result<String, StartupError> {
    verify(store, None).await
}

async fn verify(store: &Store, tenant: Option<&str>) -> Result<String, StartupError> {
    let tenants = match tenant {
        Some(t) => vec![TenantId::from(t)],
        None => store.audit().tenants().await.map_err(StartupError::Store)?,
    };
    let mut text = String::new();
    let mut broken = false;
    for tenant in &tenants {
        let report = store
            .audit()
            .verify(tenant)
            .await
            .map_err(StartupError::Store)?;
        broken |= !report.is_intact();
        text.push_str(&describe(tenant, &report));
    }
    if tenants.is_empty() {
        text.push_str("No audit records.\n");
    }
    if broken {
        return Err(StartupError::AuditBroken(text));
    }
    Ok(text)
}

fn describe(tenant: &TenantId, report: &ChainReport) -> String {
    let mut text = format!(
        "{tenant}: {} sealed record(s), head {}, {} not sealed yet: {}\n",
        report.records,
        report.head_seq,
        report.unsealed,
        if report.is_intact() {
            "intact"
        } else {
            "BROKEN"
        }
    );
    for brk in &report.breaks {
        let id = if brk.audit_id.is_empty() {
            String::new()
        } else {
            format!(" ({})", brk.audit_id)
        };
        text.push_str(&format!("  record {}{id}: {}\n", brk.seq, brk.reason));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_dates_or_rfc3339() {
        assert_eq!(parse_time("1970-01-02").unwrap(), 86_400_000);
        assert_eq!(parse_time("1970-01-01T00:00:01Z").unwrap(), 1_000);
        assert_eq!(parse_time("1970-01-01T08:00:01+08:00").unwrap(), 1_000);
        assert!(parse_time("yesterday").is_err());
    }
}
