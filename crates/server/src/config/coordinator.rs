//! `[coordinator]`: what replicas share besides the database, and how long their leases last.
//!
//! Invariants: without `redis_url` the coordinator is in-process (one replica, or replicas that
//! share only the database); with it, the URL is `redis://` or `rediss://` with a host, and its
//! password is rendered as `***`; lease terms are between one second and ten minutes.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::ConfigError;

/// `[coordinator] key_prefix` by default: every Redis key and channel starts with it.
pub(crate) const DEFAULT_KEY_PREFIX: &str = "workmate";
/// `[coordinator] session_lease_ms` by default.
pub(crate) const DEFAULT_SESSION_LEASE_MS: i64 = 30_000;
/// `[coordinator] connection_lease_ms` by default.
pub(crate) const DEFAULT_CONNECTION_LEASE_MS: i64 = 15_000;
const LEASE_RANGE_MS: std::ops::RangeInclusive<u64> = 1_000..=600_000;

/// `[coordinator]` as written.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawCoordinator {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) redis_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) key_prefix: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) session_lease_ms: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) connection_lease_ms: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) deliveries_per_minute: Option<i64>,
}

impl RawCoordinator {
    pub(crate) fn is_empty(&self) -> bool {
        self.redis_url.is_none()
            && self.key_prefix.is_none()
            && self.session_lease_ms.is_none()
            && self.connection_lease_ms.is_none()
            && self.deliveries_per_minute.is_none()
    }
}

/// `[coordinator]`.
#[derive(Clone, Debug)]
pub struct CoordinatorConfig {
    /// `redis_url`: the Redis that replicas share (event fan-out, per-minute limits, platform
    /// event dedupe, lease hand-over); unset: in-process.
    pub redis_url: Option<String>,
    /// `key_prefix`: the start of every Redis key and channel (default `workmate`).
    pub key_prefix: String,
    /// `session_lease_ms`: how long a session's writer lease lasts unless renewed (default
    /// 30000); a dead replica's turns are taken over after at most this long.
    pub session_lease: Duration,
    /// `connection_lease_ms`: how long a long connection's lease lasts unless renewed (default
    /// 15000); a dead replica's connection is open again elsewhere within this long.
    pub connection_lease: Duration,
    /// `deliveries_per_minute`: the most chat deliveries (webhook requests and long-connection
    /// events) one tenant's installation of a platform may hand over in any minute, counted for
    /// all replicas; more are refused unacknowledged, so the platform sends them again later.
    /// `None` (0, the default): no limit.
    pub deliveries_per_minute: Option<u32>,
}

impl Default for CoordinatorConfig {
    fn default() -> Self {
        Self {
            redis_url: None,
            key_prefix: DEFAULT_KEY_PREFIX.to_owned(),
            session_lease: Duration::from_millis(DEFAULT_SESSION_LEASE_MS.unsigned_abs()),
            connection_lease: Duration::from_millis(DEFAULT_CONNECTION_LEASE_MS.unsigned_abs()),
            deliveries_per_minute: None,
        }
    }
}

type Invalid<'a> = &'a dyn Fn(&'static str, &'static str, String) -> ConfigError;

pub(crate) fn validate_coordinator(
    raw: &RawCoordinator,
    invalid: Invalid<'_>,
) -> Result<CoordinatorConfig, ConfigError> {
    let redis_url = raw
        .redis_url
        .as_deref()
        .map(str::trim)
        .map(|url| {
            let ok = url::Url::parse(url)
                .is_ok_and(|u| matches!(u.scheme(), "redis" | "rediss") && u.host_str().is_some());
            if ok {
                Ok(url.to_owned())
            } else {
                Err(invalid(
                    "coordinator",
                    "redis_url",
                    "must be redis://[:password@]host[:port][/db] or rediss://…".into(),
                ))
            }
        })
        .transpose()?;
    let key_prefix = raw
        .key_prefix
        .clone()
        .unwrap_or_else(|| DEFAULT_KEY_PREFIX.to_owned());
    if key_prefix.is_empty()
        || key_prefix
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || c == '*')
    {
        return Err(invalid(
            "coordinator",
            "key_prefix",
            "is a Redis key prefix without spaces or `*`, e.g. workmate".into(),
        ));
    }
    let term = |key: &'static str, value: Option<i64>, default: i64| {
        let ms = value.unwrap_or(default);
        u64::try_from(ms)
            .ok()
            .filter(|ms| LEASE_RANGE_MS.contains(ms))
            .map(Duration::from_millis)
            .ok_or_else(|| {
                invalid(
                    "coordinator",
                    key,
                    format!("{ms} is not between 1000 and 600000 (ten minutes)"),
                )
            })
    };
    let session_lease = term(
        "session_lease_ms",
        raw.session_lease_ms,
        DEFAULT_SESSION_LEASE_MS,
    )?;
    let connection_lease = term(
        "connection_lease_ms",
        raw.connection_lease_ms,
        DEFAULT_CONNECTION_LEASE_MS,
    )?;
    let per_minute = raw.deliveries_per_minute.unwrap_or(0);
    let deliveries_per_minute = u32::try_from(per_minute)
        .ok()
        .filter(|n| *n <= 1_000_000)
        .ok_or_else(|| {
            invalid(
                "coordinator",
                "deliveries_per_minute",
                format!("{per_minute} is not between 0 (no limit) and 1000000"),
            )
        })?;
    Ok(CoordinatorConfig {
        redis_url,
        key_prefix,
        session_lease,
        connection_lease,
        deliveries_per_minute: (deliveries_per_minute > 0).then_some(deliveries_per_minute),
    })
}

/// `[coordinator]` as the rendered configuration shows it: the URL's password as `***`.
pub(crate) fn render_coordinator(config: &CoordinatorConfig) -> RawCoordinator {
    let millis = |d: Duration| i64::try_from(d.as_millis()).unwrap_or(i64::MAX);
    RawCoordinator {
        redis_url: config
            .redis_url
            .as_deref()
            .map(super::secret::redact_credentials),
        key_prefix: Some(config.key_prefix.clone()),
        session_lease_ms: Some(millis(config.session_lease)),
        connection_lease_ms: Some(millis(config.connection_lease)),
        deliveries_per_minute: config.deliveries_per_minute.map(i64::from),
    }
}
