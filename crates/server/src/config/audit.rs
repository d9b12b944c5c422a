//! `[audit.redis]` and `[audit.nats]`: where the audit trail is streamed besides the database.
//!
//! Invariants: a sink is configured by its section's `url` (a `redis://`/`rediss://` or
//! `nats://`/`tls://` URL); names and prefixes are checked against what the server accepts
//! (Redis keys without spaces, NATS subject tokens and JetStream stream names); a URL's password
//! is rendered as `***`.

use serde::{Deserialize, Serialize};

use super::ConfigError;

/// `[audit.redis] stream_prefix` by default: a tenant's stream is `<prefix>:<tenant>`.
pub(crate) const DEFAULT_REDIS_PREFIX: &str = "workmate:audit";
/// `[audit.nats] subject_prefix` by default: a tenant's subject is `<prefix>.<tenant>`.
pub(crate) const DEFAULT_NATS_PREFIX: &str = "workmate.audit";
/// `[audit.nats] stream` by default.
pub(crate) const DEFAULT_NATS_STREAM: &str = "WORKMATE_AUDIT";

/// `[audit]` as written.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawAudit {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) redis: Option<RawRedisSink>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) nats: Option<RawNatsSink>,
}

impl RawAudit {
    pub(crate) fn is_empty(&self) -> bool {
        self.redis.is_none() && self.nats.is_none()
    }
}

/// `[audit.redis]` as written.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawRedisSink {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) stream_prefix: Option<String>,
}

/// `[audit.nats]` as written.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawNatsSink {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) subject_prefix: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) stream: Option<String>,
}

/// `[audit]`: the sinks the trail is streamed to, besides the database.
#[derive(Clone, Debug, Default)]
pub struct AuditConfig {
    /// `[audit.redis]`, when configured.
    pub redis: Option<RedisSinkConfig>,
    /// `[audit.nats]`, when configured.
    pub nats: Option<NatsSinkConfig>,
}

/// `[audit.redis]`: one Redis stream per tenant.
#[derive(Clone, Debug)]
pub struct RedisSinkConfig {
    /// `url`: `redis://[:password@]host:port[/db]`.
    pub url: String,
    /// `stream_prefix`: a tenant's stream is `<prefix>:<tenant>`.
    pub stream_prefix: String,
}

/// `[audit.nats]`: a JetStream stream, one subject per tenant.
#[derive(Clone, Debug)]
pub struct NatsSinkConfig {
    /// `url`: `nats://host:port`.
    pub url: String,
    /// `subject_prefix`: a tenant's subject is `<prefix>.<tenant>`.
    pub subject_prefix: String,
    /// `stream`: the JetStream stream (created when missing) holding `<prefix>.>`.
    pub stream: String,
}

impl RedisSinkConfig {
    /// A sink at `url` with the default prefix.
    pub fn new(url: &str) -> Self {
        Self {
            url: url.to_owned(),
            stream_prefix: DEFAULT_REDIS_PREFIX.to_owned(),
        }
    }
}

impl NatsSinkConfig {
    /// A sink at `url` with the default subject prefix and stream.
    pub fn new(url: &str) -> Self {
        Self {
            url: url.to_owned(),
            subject_prefix: DEFAULT_NATS_PREFIX.to_owned(),
            stream: DEFAULT_NATS_STREAM.to_owned(),
        }
    }
}

type Invalid<'a> = &'a dyn Fn(&'static str, &'static str, String) -> ConfigError;

pub(crate) fn validate_audit(
    raw: &RawAudit,
    invalid: Invalid<'_>,
) -> Result<AuditConfig, ConfigError> {
    let url = |section: &'static str, url: Option<&String>, schemes: &[&str]| {
        let url = url.map(|u| u.trim().to_owned()).ok_or_else(|| {
            invalid(
                section,
                "url",
                format!("is required, e.g. {}://127.0.0.1", schemes[0]),
            )
        })?;
        let parsed = url::Url::parse(&url)
            .map_err(|e| invalid(section, "url", format!("is not a URL: {e}")))?;
        if !schemes.contains(&parsed.scheme()) || parsed.host_str().is_none() {
            return Err(invalid(
                section,
                "url",
                format!("must be {}://host[:port]", schemes.join("://… or ")),
            ));
        }
        Ok(url)
    };
    let redis = raw
        .redis
        .as_ref()
        .map(|r| {
            let prefix = r
                .stream_prefix
                .clone()
                .unwrap_or_else(|| DEFAULT_REDIS_PREFIX.to_owned());
            if prefix.is_empty() || prefix.chars().any(|c| c.is_whitespace() || c.is_control()) {
                return Err(invalid(
                    "audit.redis",
                    "stream_prefix",
                    "is a Redis key prefix without spaces, e.g. workmate:audit".into(),
                ));
            }
            Ok(RedisSinkConfig {
                url: url("audit.redis", r.url.as_ref(), &["redis", "rediss"])?,
                stream_prefix: prefix,
            })
        })
        .transpose()?;
    let token = |t: &str| {
        !t.is_empty()
            && t.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    };
    let nats = raw
        .nats
        .as_ref()
        .map(|n| {
            let prefix = n
                .subject_prefix
                .clone()
                .unwrap_or_else(|| DEFAULT_NATS_PREFIX.to_owned());
            if !prefix.split('.').all(token) {
                return Err(invalid(
                    "audit.nats",
                    "subject_prefix",
                    "is dot-separated tokens of letters, digits, - and _, e.g. workmate.audit"
                        .into(),
                ));
            }
            let stream = n
                .stream
                .clone()
                .unwrap_or_else(|| DEFAULT_NATS_STREAM.to_owned());
            if !token(&stream) {
                return Err(invalid(
                    "audit.nats",
                    "stream",
                    "is a JetStream stream name of letters, digits, - and _".into(),
                ));
            }
            Ok(NatsSinkConfig {
                url: url("audit.nats", n.url.as_ref(), &["nats", "tls"])?,
                subject_prefix: prefix,
                stream,
            })
        })
        .transpose()?;
    Ok(AuditConfig { redis, nats })
}

/// `[audit]` as the rendered configuration shows it: URL passwords as `***`.
pub(crate) fn render_audit(config: &AuditConfig) -> RawAudit {
    let hidden = |url: &str| match url::Url::parse(url) {
        Ok(mut parsed) if parsed.password().is_some() => {
            let _ = parsed.set_password(Some("***"));
            parsed.to_string()
        }
        _ => url.to_owned(),
    };
    RawAudit {
        redis: config.redis.as_ref().map(|r| RawRedisSink {
            url: Some(hidden(&r.url)),
            stream_prefix: Some(r.stream_prefix.clone()),
        }),
        nats: config.nats.as_ref().map(|n| RawNatsSink {
            url: Some(hidden(&n.url)),
            subject_prefix: Some(n.subject_prefix.clone()),
            stream: Some(n.stream.clone()),
        }),
    }
}
