//! `[server]` bounds of the HTTP listener and the surface tokens.
//!
//! Invariants: every bound is a positive number within a range that keeps the server usable (a
//! request timeout of zero would refuse everything); a surface token is at least 16 characters,
//! trimmed, unique among surfaces and different from a configured admin token, so a presented
//! token names exactly one caller.

use std::collections::BTreeMap;
use std::time::Duration;

use secrecy::{ExposeSecret, SecretString};

use super::validate::RawServer;
use super::{ConfigError, Source};

/// `request_timeout_ms` by default: a request's head to its response's head.
pub(crate) const DEFAULT_REQUEST_TIMEOUT_MS: i64 = 30_000;
/// `header_read_timeout_ms` by default: a new connection's first request head.
pub(crate) const DEFAULT_HEADER_READ_TIMEOUT_MS: i64 = 10_000;
/// `max_body_bytes` by default (axum's own default).
pub(crate) const DEFAULT_MAX_BODY_BYTES: i64 = 2 * 1024 * 1024;
/// `max_connections` by default: open HTTP connections at once.
pub(crate) const DEFAULT_MAX_CONNECTIONS: i64 = 1024;
/// `idle_timeout_ms` by default: a connection quiet this long is closed.
pub(crate) const DEFAULT_IDLE_TIMEOUT_MS: i64 = 60_000;

/// The shortest surface token accepted, like the admin token.
const MIN_TOKEN_CHARS: usize = 16;

/// Bounds on what one client can hold of the HTTP listener.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HttpLimits {
    /// `request_timeout_ms`: how long a request may take until its response starts (default
    /// 30000). Reading the body counts; an event stream's body, once started, does not.
    pub request_timeout: Duration,
    /// `header_read_timeout_ms`: how long a new connection may take to send its first request
    /// head (default 10000).
    pub header_read_timeout: Duration,
    /// `max_body_bytes`: the largest request body accepted; larger ones get 413 (default 2 MiB).
    pub max_body_bytes: usize,
    /// `max_connections`: open connections at once; at the cap the connection idle the longest
    /// is closed for a new one, else the new one waits (default 1024).
    pub max_connections: usize,
    /// `max_connections_per_client`: open connections from one address (default: half of
    /// `max_connections`); at the cap its own idlest connection is closed, else the new one is.
    pub max_connections_per_client: usize,
    /// `idle_timeout_ms`: a connection on which nothing is read or written this long is closed
    /// (default 60000).
    pub idle_timeout: Duration,
    /// `max_streams_per_client`: event streams one address may hold open (default 64); more
    /// get `429`.
    pub max_streams_per_client: usize,
}

impl Default for HttpLimits {
    fn default() -> Self {
        let ms = |v: i64| Duration::from_millis(u64::try_from(v).unwrap_or_default());
        Self {
            request_timeout: ms(DEFAULT_REQUEST_TIMEOUT_MS),
            header_read_timeout: ms(DEFAULT_HEADER_READ_TIMEOUT_MS),
            max_body_bytes: usize::try_from(DEFAULT_MAX_BODY_BYTES).unwrap_or(usize::MAX),
            max_connections: usize::try_from(DEFAULT_MAX_CONNECTIONS).unwrap_or(usize::MAX),
            max_connections_per_client: per_client_default(
                usize::try_from(DEFAULT_MAX_CONNECTIONS).unwrap_or(usize::MAX),
            ),
            idle_timeout: ms(DEFAULT_IDLE_TIMEOUT_MS),
            max_streams_per_client: crate::http::DEFAULT_MAX_STREAMS_PER_CLIENT,
        }
    }
}

/// Half the connections, at least one.
fn per_client_default(max_connections: usize) -> usize {
    (max_connections / 2).max(1)
}

impl HttpLimits {
    /// Limits with the main bounds given (half of the connections per client, the default idle
    /// timeout), for tests and embedders.
    pub fn new(
        request_timeout: Duration,
        header_read_timeout: Duration,
        max_body_bytes: usize,
        max_connections: usize,
    ) -> Self {
        Self {
            request_timeout,
            header_read_timeout,
            max_body_bytes,
            max_connections,
            max_connections_per_client: per_client_default(max_connections),
            idle_timeout: Self::default().idle_timeout,
            max_streams_per_client: crate::http::DEFAULT_MAX_STREAMS_PER_CLIENT,
        }
    }

    /// The same, with at most `max` connections from one address.
    #[must_use]
    pub fn with_max_connections_per_client(mut self, max: usize) -> Self {
        self.max_connections_per_client = max;
        self
    }

    /// The same, closing connections idle for `idle_timeout`.
    #[must_use]
    pub fn with_idle_timeout(mut self, idle_timeout: Duration) -> Self {
        self.idle_timeout = idle_timeout;
        self
    }
}

/// A surface (a chat adapter or another trusted front end) and its token.
#[derive(Clone, Debug)]
pub struct SurfaceToken {
    /// The name it is configured under (`[server.surface_tokens] NAME`).
    pub name: String,
    /// The token, trimmed.
    pub token: SecretString,
    /// Whom it may act for (`[server.surface_grants] NAME`).
    pub grants: SurfaceGrants,
}

/// Whom a surface token may act for, by their role: `[server.surface_grants] NAME = ["members",
/// "approvers", "admins"]` (default members and approvers). Never the built-in `admin`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SurfaceGrants {
    /// People with the member role.
    pub members: bool,
    /// People with the approver role.
    pub approvers: bool,
    /// People with the admin role (only where the operator wrote so).
    pub admins: bool,
}

impl Default for SurfaceGrants {
    fn default() -> Self {
        Self {
            members: true,
            approvers: true,
            admins: false,
        }
    }
}

impl SurfaceGrants {
    /// Members, approvers and admins: `["members", "approvers", "admins"]`.
    pub fn everyone() -> Self {
        Self {
            members: true,
            approvers: true,
            admins: true,
        }
    }

    const WORDS: [&'static str; 3] = ["members", "approvers", "admins"];

    fn parse(words: &[String]) -> Result<Self, String> {
        let mut grants = Self {
            members: false,
            approvers: false,
            admins: false,
        };
        for word in words {
            match word.trim() {
                "members" => grants.members = true,
                "approvers" => grants.approvers = true,
                "admins" => grants.admins = true,
                other => {
                    return Err(format!(
                        "{other:?} is not one of {}",
                        Self::WORDS.join(", ")
                    ));
                }
            }
        }
        Ok(grants)
    }

    /// The words, as written in the file.
    pub fn words(self) -> Vec<String> {
        [self.members, self.approvers, self.admins]
            .into_iter()
            .zip(Self::WORDS)
            .filter(|(on, _)| *on)
            .map(|(_, word)| word.to_owned())
            .collect()
    }

    /// Whether a person of `role` may be acted for.
    pub fn allows(self, role: workmate_store::Role) -> bool {
        match role {
            workmate_store::Role::Member => self.members,
            workmate_store::Role::Approver => self.approvers,
            workmate_store::Role::Admin => self.admins,
        }
    }
}

type Invalid<'a> = &'a dyn Fn(&'static str, &'static str, String) -> ConfigError;

pub(crate) fn validate_limits(
    raw: &RawServer,
    invalid: Invalid<'_>,
) -> Result<HttpLimits, ConfigError> {
    let bounded = |key: &'static str, value: Option<i64>, default: i64, range: (u64, u64)| {
        let value = value.unwrap_or(default);
        u64::try_from(value)
            .ok()
            .filter(|v| (range.0..=range.1).contains(v))
            .ok_or_else(|| {
                invalid(
                    "server",
                    key,
                    format!("{value} is not between {} and {}", range.0, range.1),
                )
            })
    };
    let request = bounded(
        "request_timeout_ms",
        raw.request_timeout_ms,
        DEFAULT_REQUEST_TIMEOUT_MS,
        (100, 3_600_000),
    )?;
    let header = bounded(
        "header_read_timeout_ms",
        raw.header_read_timeout_ms,
        DEFAULT_HEADER_READ_TIMEOUT_MS,
        (100, 600_000),
    )?;
    let body = bounded(
        "max_body_bytes",
        raw.max_body_bytes,
        DEFAULT_MAX_BODY_BYTES,
        (1024, 1024 * 1024 * 1024),
    )?;
    let connections = bounded(
        "max_connections",
        raw.max_connections,
        DEFAULT_MAX_CONNECTIONS,
        (1, 1_000_000),
    )?;
    let idle = bounded(
        "idle_timeout_ms",
        raw.idle_timeout_ms,
        DEFAULT_IDLE_TIMEOUT_MS,
        (1000, 3_600_000),
    )?;
    let max_connections = usize::try_from(connections).unwrap_or(usize::MAX);
    let per_client = match raw.max_connections_per_client {
        None => per_client_default(max_connections),
        Some(_) => usize::try_from(bounded(
            "max_connections_per_client",
            raw.max_connections_per_client,
            0,
            (1, connections),
        )?)
        .unwrap_or(usize::MAX),
    };
    let streams = bounded(
        "max_streams_per_client",
        raw.max_streams_per_client,
        i64::try_from(crate::http::DEFAULT_MAX_STREAMS_PER_CLIENT).unwrap_or(64),
        (1, 100_000),
    )?;
    Ok(HttpLimits {
        max_streams_per_client: usize::try_from(streams).unwrap_or(usize::MAX),
        request_timeout: Duration::from_millis(request),
        header_read_timeout: Duration::from_millis(header),
        max_body_bytes: usize::try_from(body).unwrap_or(usize::MAX),
        max_connections,
        max_connections_per_client: per_client,
        idle_timeout: Duration::from_millis(idle),
    })
}

pub(crate) fn validate_surface_tokens(
    raw: &BTreeMap<String, String>,
    raw_grants: &BTreeMap<String, Vec<String>>,
    admin: Option<&SecretString>,
    origin: impl Fn(&str) -> Source,
) -> Result<Vec<SurfaceToken>, ConfigError> {
    if let Some(stray) = raw_grants.keys().find(|name| !raw.contains_key(*name)) {
        return Err(ConfigError::SurfaceToken {
            name: stray.clone(),
            origin: origin(stray),
            problem: "[server.surface_grants] names a surface that has no token in                       [server.surface_tokens]"
                .into(),
        });
    }
    let mut out: Vec<SurfaceToken> = Vec::new();
    for (name, token) in raw {
        let fail = |problem: String| ConfigError::SurfaceToken {
            name: name.clone(),
            origin: origin(name),
            problem,
        };
        let valid_name = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
        if !valid_name {
            return Err(fail(
                "a surface name is lowercase letters, digits, `-` and `_` (e.g. slack-bridge)"
                    .into(),
            ));
        }
        let token = token.trim();
        if token.chars().count() < MIN_TOKEN_CHARS {
            return Err(fail(format!(
                "a surface token must be at least {MIN_TOKEN_CHARS} characters"
            )));
        }
        if admin.is_some_and(|a| a.expose_secret() == token) {
            return Err(fail(
                "a surface token must differ from the admin token".into(),
            ));
        }
        if let Some(other) = out.iter().find(|s| s.token.expose_secret() == token) {
            return Err(fail(format!(
                "the token is also the token of surface {}; give each surface its own",
                other.name
            )));
        }
        let grants = match raw_grants.get(name) {
            Some(words) => SurfaceGrants::parse(words)
                .map_err(|e| fail(format!("[server.surface_grants]: {e}")))?,
            None => SurfaceGrants::default(),
        };
        out.push(SurfaceToken {
            name: name.clone(),
            token: SecretString::from(token.to_owned()),
            grants,
        });
    }
    Ok(out)
}

/// `replica_id`, or `<hostname>:<listen port>`: two processes on one host cannot share a port.
pub(crate) fn validate_replica_id(
    raw: Option<String>,
    listen: std::net::SocketAddr,
    invalid: &impl Fn(&'static str, &'static str, String) -> ConfigError,
) -> Result<String, ConfigError> {
    match raw.map(|id| id.trim().to_owned()) {
        Some(id) if id.is_empty() || id.len() > 64 => Err(invalid(
            "server",
            "replica_id",
            "must be 1 to 64 characters, e.g. the pod name".into(),
        )),
        Some(id) => Ok(id),
        None => Ok(format!("{}:{}", hostname(), listen.port())),
    }
}

fn hostname() -> String {
    std::env::var("HOSTNAME")
        .ok()
        .or_else(|| std::fs::read_to_string("/proc/sys/kernel/hostname").ok())
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into())
}
